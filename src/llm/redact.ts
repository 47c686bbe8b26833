/**
 * Removes anything that looks like a bearer token or API key from a message
 * before it is logged or shown (servers and gateways sometimes echo the
 * Authorization header in an error body).
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1[redacted]').replace(/\b(sk-[A-Za-z0-9_-]{8,})/g, '[redacted]');
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}
