/**
 * Endpoint URL helpers. Users configure the OpenAI base URL (".../v1"); vLLM
 * serves /tokenize, /metrics and /health at the server root.
 */

/** Trims trailing slashes and adds "/v1" when the URL has no path at all. */
export function normalizeBaseURL(url: string): string {
  const trimmed = url.trim().replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    throw new Error(`Invalid endpoint URL: ${JSON.stringify(url)} (expected e.g. http://localhost:8000/v1)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`Invalid endpoint URL: ${JSON.stringify(url)} (only http and https are supported)`);
  }
  if (parsed.pathname === '' || parsed.pathname === '/') return `${trimmed}/v1`;
  return trimmed;
}

/** The server root: the base URL without its trailing "/v1". */
export function serverRoot(baseURL: string): string {
  return normalizeBaseURL(baseURL).replace(/\/v1$/, '');
}

/** Port of the endpoint, for messages ("vllm serve ... --port N"). */
export function endpointPort(baseURL: string): string {
  const u = new URL(normalizeBaseURL(baseURL));
  return u.port || (u.protocol === 'https:' ? '443' : '80');
}
