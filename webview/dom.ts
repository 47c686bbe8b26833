/** Tiny DOM helpers: no innerHTML except sanitized markdown. */
type Attrs = Record<string, string | number | boolean | null | undefined>;
type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K];
export function h(tag: string, attrs?: Attrs | null, ...children: Child[]): HTMLElement;
export function h(tag: string, attrs?: Attrs | null, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  if (attrs) {
    for (const k in attrs) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = String(v);
      else if (k === 'text') el.textContent = String(v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c);
  }
  return el;
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/** Sets an attribute only when it changes (cheap in hot paths, no needless mutation records). */
export function setAttr(el: Element, name: string, value: string): void {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/** A vscode-elements button. */
export function button(
  label: string,
  opts: { secondary?: boolean; title?: string; cls?: string; disabled?: boolean; ariaLabel?: string } = {},
): HTMLElement {
  const b = h('vscode-button', {
    secondary: opts.secondary ?? false,
    title: opts.title,
    class: opts.cls,
    disabled: opts.disabled ?? false,
    'aria-label': opts.ariaLabel,
  });
  b.textContent = label;
  return b;
}

export function setDisabled(el: Element, disabled: boolean): void {
  if (disabled) el.setAttribute('disabled', '');
  else el.removeAttribute('disabled');
}
