/**
 * `splitpoint sim [--port N] ...`: runs the simulator until the process is
 * stopped. Returns the handle so callers (and tests) can close it.
 */
import { startSimulator, type SimHandle, type SimOptions } from './server';

export const SIM_USAGE = `Usage: splitpoint sim [options]

  --port N               port to listen on (default 8000; 0 = any free port)
  --host H               interface (default 127.0.0.1)
  --model NAME           served model id (default sim-model)
  --max-model-len N      context window (default 32768)
  --tokenizer KIND       tiktoken (default) | char
  --time-scale X         multiply every latency by X (default 1; 0 = instant)
  --prefill-ms X         ms per uncached prompt token (default 0.05)
  --decode-ms X          ms per generated token (default 8)
  --max-num-seqs N       concurrent sequences (default 8)
  --cache-blocks N       KV pool size in 16-token blocks (default 16384)
  --pessimistic          blocks reusable only after prefill completes
  --no-prefix-caching    disable the prefix cache
  --no-tool-parser       reject tool_choice "auto" like vLLM without --enable-auto-tool-choice
  --no-tokenize          no /tokenize route (404)
  --summary-tokens N     summarizer length prior (default 500)
  --script FILE          scripted-agent replies (JSON)
  --error-shape S        current (default) | legacy
  --overflow-wording W   current (default) | v0.10 | legacy | v1-decoder
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

export function parseSimArgs(argv: string[]): SimOptions & { help?: boolean; quiet?: boolean } {
  const o: SimOptions & { help?: boolean; quiet?: boolean } = { port: 8000, latency: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const val = () => inline ?? argv[++i];
    switch (flag) {
      case '-h':
      case '--help': o.help = true; break;
      case '--quiet': o.quiet = true; break;
      case '--port': o.port = num(flag, val()); break;
      case '--host': o.host = val(); break;
      case '--model': o.model = val(); break;
      case '--max-model-len': o.maxModelLen = num(flag, val()); break;
      case '--tokenizer': {
        const t = val();
        if (t !== 'tiktoken' && t !== 'char') throw new Error('--tokenizer must be tiktoken or char');
        o.tokenizer = t;
        break;
      }
      case '--time-scale': o.latency!.timeScale = num(flag, val()); break;
      case '--prefill-ms': o.latency!.prefillMsPerToken = num(flag, val()); break;
      case '--decode-ms': o.latency!.decodeMsPerToken = num(flag, val()); break;
      case '--max-num-seqs': o.latency!.maxNumSeqs = num(flag, val()); break;
      case '--cache-blocks': o.cacheCapacityBlocks = num(flag, val()); break;
      case '--pessimistic': o.pessimistic = true; break;
      case '--no-prefix-caching': o.prefixCaching = false; break;
      case '--no-tool-parser': o.toolParser = false; break;
      case '--no-tokenize': o.tokenizeRoute = false; break;
      case '--summary-tokens': o.summaryTokens = num(flag, val()); break;
      case '--script': o.script = val(); break;
      case '--error-shape': {
        const s = val();
        if (s !== 'current' && s !== 'legacy') throw new Error('--error-shape must be current or legacy');
        o.errorShape = s;
        break;
      }
      case '--overflow-wording': {
        const w = val();
        if (w !== 'current' && w !== 'v0.10' && w !== 'legacy' && w !== 'v1-decoder') throw new Error('--overflow-wording must be current, v0.10, legacy or v1-decoder');
        o.overflowWording = w;
        break;
      }
      case '--api-key': o.apiKey = val(); break;
      default:
        throw new Error(`unknown option: ${a}\n\n${SIM_USAGE}`);
    }
  }
  return o;
}

/** Starts the simulator from command-line arguments. Resolves once it listens; undefined for --help. */
export async function runSimCli(argv: string[], io: SimCliIo = { out: (l) => console.log(l), err: (l) => console.error(l) }): Promise<SimHandle | undefined> {
  const o = parseSimArgs(argv);
  if (o.help) {
    io.out(SIM_USAGE);
    return undefined;
  }
  const { help: _help, quiet, ...opts } = o;
  void _help;
  const sim = await startSimulator({ ...opts, log: quiet ? undefined : io.err });
  io.out(`Splitpoint vLLM simulator: model ${sim.model}, window ${sim.maxModelLen}, listening on ${sim.url}`);
  return sim;
}
