/**
 * `splitpoint sim [--port N] ...`: runs the simulator (or several replicas)
 * until the process is stopped. Returns a handle so callers (and tests) can
 * close it.
 */
import { NAMED_PROFILES } from '../../src/core/perf/profile';
import { loadProfileFile } from './options';
import { startReplicas } from './replicas';
import type { SimHandle, SimOptions } from './server';

export const SIM_USAGE = `Usage: splitpoint sim [options]

  --port N               port to listen on (default 8000; 0 = any free port)
  --host H               interface (default 127.0.0.1)
  --model NAME           served model id (default sim-model)
  --max-model-len N      context window (default 32768)
  --tokenizer KIND       tiktoken (default) | char
  --profile NAME         step costs and limits: ${Object.keys(NAMED_PROFILES).join(' | ')} (default h100-7b)
  --profile-file PATH    a PerfProfile JSON file instead (validated)
  --time-scale X         real ms per simulated ms (default 1; 0 = never sleep)
  --max-num-seqs N       override the profile's max-num-seqs
  --max-num-batched-tokens N  override the profile's max-num-batched-tokens
  --replicas N           N independent servers on consecutive ports (default 1)
  --cache-blocks N       KV pool size in 16-token blocks (default: the profile's KV capacity)
  --pessimistic          blocks reusable only after prefill completes
  --no-prefix-caching    disable the prefix cache
  --no-tool-parser       reject tool_choice "auto" like vLLM without --enable-auto-tool-choice
  --no-tokenize          no /tokenize route (404)
  --strict-history-arguments  400 for history tool-call arguments that do not parse as JSON (vLLM's 2025 releases)
  --summary-tokens N     summarizer length prior (default 500)
  --stream-chunk-tokens N  tokens per streamed event (default 4; vLLM sends 1 per step)
  --script FILE          scripted-agent replies (JSON)
  --error-shape S        current (default) | legacy
  --overflow-wording W   current (default) | early-2026 | v0.10 | legacy | v1-decoder
  --metric-names M       /metrics names: current (default, vLLM 0.13+) | v0.10 | no-decode
  --api-key KEY          require this Bearer token
  --quiet                no log lines
`;

export interface SimCliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

function num(flag: string, v: string | undefined): number {
  const n = Number(v);
  if (v === undefined || !Number.isFinite(n)) throw new Error(`${flag} needs a number`);
  return n;
}

function int(flag: string, v: string | undefined): number {
  const n = num(flag, v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} needs a positive integer`);
  return n;
}

export type SimCliOptions = SimOptions & { help?: boolean; quiet?: boolean; replicas?: number };

export function parseSimArgs(argv: string[]): SimCliOptions {
  const o: SimCliOptions = { port: 8000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const val = () => inline ?? argv[++i];
    switch (flag) {
      case '-h':
      case '--help':
        o.help = true;
        break;
      case '--quiet':
        o.quiet = true;
        break;
      case '--port':
        o.port = num(flag, val());
        break;
      case '--host':
        o.host = val();
        break;
      case '--model':
        o.model = val();
        break;
      case '--max-model-len':
        o.maxModelLen = num(flag, val());
        break;
      case '--tokenizer': {
        const t = val();
        if (t !== 'tiktoken' && t !== 'char') throw new Error('--tokenizer must be tiktoken or char');
        o.tokenizer = t;
        break;
      }
      case '--profile': {
        const name = val();
        if (!name || !NAMED_PROFILES[name])
          throw new Error(`--profile must be one of ${Object.keys(NAMED_PROFILES).join(', ')} (or use --profile-file PATH)`);
        o.profile = name;
        break;
      }
      case '--profile-file': {
        const path = val();
        if (!path) throw new Error('--profile-file needs a path');
        o.profile = loadProfileFile(path);
        break;
      }
      case '--time-scale': {
        o.timeScale = num(flag, val());
        if (o.timeScale < 0) throw new Error('--time-scale must be ≥ 0');
        break;
      }
      case '--max-num-seqs':
        o.maxNumSeqs = int(flag, val());
        break;
      case '--max-num-batched-tokens':
        o.maxNumBatchedTokens = int(flag, val());
        break;
      case '--replicas':
        o.replicas = int(flag, val());
        break;
      case '--cache-blocks':
        o.cacheCapacityBlocks = num(flag, val());
        break;
      case '--pessimistic':
        o.pessimistic = true;
        break;
      case '--no-prefix-caching':
        o.prefixCaching = false;
        break;
      case '--no-tool-parser':
        o.toolParser = false;
        break;
      case '--strict-history-arguments':
        o.strictHistoryArguments = true;
        break;
      case '--no-tokenize':
        o.tokenizeRoute = false;
        break;
      case '--summary-tokens':
        o.summaryTokens = num(flag, val());
        break;
      case '--stream-chunk-tokens':
        o.streamChunkTokens = int(flag, val());
        break;
      case '--script':
        o.script = val();
        break;
      case '--error-shape': {
        const s = val();
        if (s !== 'current' && s !== 'legacy') throw new Error('--error-shape must be current or legacy');
        o.errorShape = s;
        break;
      }
      case '--metric-names': {
        const m = val();
        if (m !== 'current' && m !== 'v0.10' && m !== 'no-decode') throw new Error('--metric-names must be current, v0.10 or no-decode');
        o.metricNames = m;
        break;
      }
      case '--overflow-wording': {
        const w = val();
        if (w !== 'current' && w !== 'early-2026' && w !== 'v0.10' && w !== 'legacy' && w !== 'v1-decoder') {
          throw new Error('--overflow-wording must be current, early-2026, v0.10, legacy or v1-decoder');
        }
        o.overflowWording = w;
        break;
      }
      case '--api-key':
        o.apiKey = val();
        break;
      default:
        throw new Error(`unknown option: ${a}\n\n${SIM_USAGE}`);
    }
  }
  return o;
}

/** Starts the simulator from command-line arguments. Resolves once it listens; undefined for --help. */
export interface SimCliHandle {
  /** The first replica (the only one without --replicas). */
  readonly sim: SimHandle;
  readonly replicas: SimHandle[];
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the simulator from command-line arguments. Resolves once every replica listens; undefined for --help. */
const CONSOLE_IO: SimCliIo = { out: (l) => console.log(l), err: (l) => console.error(l) };

export async function runSimCli(argv: string[], io: SimCliIo = CONSOLE_IO): Promise<SimCliHandle | undefined> {
  const o = parseSimArgs(argv);
  if (o.help) {
    io.out(SIM_USAGE);
    return undefined;
  }
  const { help: _help, quiet, replicas: n = 1, ...opts } = o;
  void _help;
  const replicas = await startReplicas(n, { ...opts, log: quiet ? undefined : io.err });
  const s = replicas[0];
  const p = s.profile;
  io.out(`Splitpoint vLLM simulator: model ${s.model}, window ${s.maxModelLen}, listening on ${s.url}`);
  for (const [i, r] of replicas.entries()) if (i > 0) io.out(`replica ${i}: listening on ${r.url}`);
  io.out(`profile ${p.name} (max-num-seqs ${p.maxNumSeqs}, max-num-batched-tokens ${p.maxNumBatchedTokens}), time scale ${s.timeScale}`);
  return { sim: s, replicas, url: s.url, close: async () => void (await Promise.all(replicas.map((r) => r.close()))) };
}
