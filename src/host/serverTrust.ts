import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { createPacedFetch, type PacedFetch } from '../llm/pacedFetch';

export const CA_FILE_SETTING = 'splitpoint.tls.caFile';

export interface Transport {
  /** The transport to give the model clients; undefined: the process's shared one. */
  fetch: PacedFetch | undefined;
  /** Why the CA file in the settings is not used, for the user. */
  problem?: string;
}

/**
 * The model clients' transport when `splitpoint.tls.caFile` names a PEM file
 * of certificate authorities to trust (a vLLM server behind a self-signed or
 * company-internal certificate). Node's `ca` option replaces the authorities
 * it trusts, so the file's are given together with the well-known ones Node
 * ships. They go in the transport's agent options, which VS Code's proxy
 * support keeps for the request when it swaps in its own agent (it then adds
 * no system certificates of its own). One transport at a time: a new file
 * (or new contents) closes the old one's idle sockets.
 */
export class ServerTrust {
  private current: { pem: string; fetch: PacedFetch } | undefined;

  constructor(private readonly read: (path: string) => string = (p) => readFileSync(p, 'utf8')) {}

  transport(caFile: string | undefined): Transport {
    if (!caFile) return this.use(undefined);
    const path = caFile.startsWith('~/') ? join(homedir(), caFile.slice(2)) : caFile;
    const fail = (why: string): Transport => ({
      ...this.use(undefined),
      problem: `${CA_FILE_SETTING}: ${why}; connecting without it.`,
    });
    if (!isAbsolute(path)) return fail(`"${caFile}" is not an absolute path (nor one starting with ~/)`);
    let pem: string;
    try {
      pem = this.read(path);
    } catch (e) {
      return fail(`cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
    const blocks = pem.match(/-----BEGIN CERTIFICATE-----[^-]*-----END CERTIFICATE-----/g);
    if (!blocks) return fail(`${path} holds no PEM certificate (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----)`);
    // Node's TLS layer skips a certificate it cannot parse without a word; the user should hear of it now.
    for (const [i, block] of blocks.entries()) {
      try {
        new X509Certificate(block);
      } catch (e) {
        return fail(`certificate ${i + 1} in ${path} is not one Node can use (${e instanceof Error ? e.message : String(e)})`);
      }
    }
    return this.use(pem);
  }

  dispose(): void {
    this.use(undefined);
  }

  private use(pem: string | undefined): Transport {
    if (this.current?.pem === pem) return { fetch: this.current?.fetch };
    this.current?.fetch.close();
    this.current = pem === undefined ? undefined : { pem, fetch: createPacedFetch({ tls: { ca: [...rootCertificates, pem] } }) };
    return { fetch: this.current?.fetch };
  }
}
