/** Markdown to safe HTML: marked, then DOMPurify with a tight profile (no remote content, no styles, no forms). */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

// Raw HTML in model output is shown as text, never parsed as markup (DOMPurify stays as the second line).
const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html(token) {
      return escapeHtml(token.text);
    },
  },
});

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [
    'style',
    'img',
    'video',
    'audio',
    'source',
    'picture',
    'iframe',
    'object',
    'embed',
    'form',
    'input',
    'button',
    'textarea',
    'select',
    'link',
    'meta',
    'base',
    'svg',
    'math',
  ],
  FORBID_ATTR: ['style', 'srcset', 'src', 'action', 'formaction', 'ping'],
  ALLOW_DATA_ATTR: false,
};

let hooked = false;
function hook(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      const href = node.getAttribute('href') ?? '';
      // Only plain web links and in-page anchors; the host decides what to open.
      if (!/^(https?:|#)/i.test(href)) node.removeAttribute('href');
      node.setAttribute('rel', 'noopener noreferrer');
    }
  });
}

const cache = new Map<string, string>();

/** `cache: false` for text that is still growing (a streaming reply): every frame would add a key. */
export function renderMarkdown(src: string, useCache = true): string {
  const hit = useCache ? cache.get(src) : undefined;
  if (hit !== undefined) return hit;
  hook();
  let html: string;
  try {
    html = marked.parse(src, { async: false }) as string;
  } catch {
    html = '';
  }
  const clean = DOMPurify.sanitize(html, PURIFY) as unknown as string;
  if (!useCache) return clean;
  if (cache.size > 2000) cache.clear();
  cache.set(src, clean);
  return clean;
}

/** Fills `el` with rendered markdown and decorates code blocks with a copy button. */
export function fillMarkdown(el: HTMLElement, src: string, useCache = true): void {
  el.innerHTML = renderMarkdown(src, useCache);
  for (const pre of Array.from(el.querySelectorAll('pre'))) {
    const code = pre.querySelector('code');
    const lang = code ? /language-([\w+-]+)/.exec(code.className)?.[1] : undefined;
    const bar = document.createElement('div');
    bar.className = 'code-bar';
    const label = document.createElement('span');
    label.textContent = lang ?? 'code';
    const copy = document.createElement('button');
    copy.className = 'link-btn copy-code';
    copy.type = 'button';
    copy.textContent = 'Copy';
    copy.setAttribute('aria-label', `Copy ${lang ?? ''} code`.replace(/\s+/g, ' '));
    bar.append(label, copy);
    pre.before(bar);
  }
}

/**
 * "DECISIONS:" alone on its line, "NEXT STEP: run the tests", or in the conversation's language ("DÉCISIONS :", "决策：" is
 * not upper case and is left alone): a summary's section heading, with its text or not.
 */
const SECTION_HEADING = /^\p{Lu}[\p{Lu} ]+\s?[:\uFF1A](?:\s.*)?$/u;
const BARE_HEADING = /^\p{Lu}[\p{Lu} ]+\s?[:\uFF1A]$/u;
const FENCE = /^\s*(```|~~~)/;

/**
 * A summary's section headings (DECISIONS:, CURRENT WORK:) are plain lines, and in Markdown a plain line right after
 * a list item or a paragraph continues it: "- none" then "FACTS:" rendered as the one bullet "none FACTS:". A blank
 * line before each heading starts a block of its own, and one after a bare heading keeps it apart from its first
 * line. An indented line is left alone, as it may belong to the item above. Only what is rendered changes: the
 * message's text, which Pin copies and the session stores, is left as the model wrote it.
 */
export function summaryMarkdown(src: string): string {
  const out: string[] = [];
  let fenced = false;
  for (const line of src.split('\n')) {
    if (FENCE.test(line)) fenced = !fenced;
    const text = line.trimEnd();
    if (fenced || !SECTION_HEADING.test(text)) {
      out.push(line);
      continue;
    }
    if (out.length > 0 && out[out.length - 1]!.trim() !== '') out.push('');
    out.push(text);
    if (BARE_HEADING.test(text)) out.push('');
  }
  return out.join('\n');
}
