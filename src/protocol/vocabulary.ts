/**
 * The shared vocabulary's lists, for the webview and the validator. Declared
 * once in the core (src/core/vocabulary.ts, plain data); re-exported here so
 * the webview imports only from src/protocol.
 */
export {
  BLOCK_STATUSES,
  isOneOf,
  LAYOUTS,
  MESSAGE_KINDS,
  MODES,
  ORIGINS,
  PIN_KINDS,
  ROLES,
  STRATEGY_NAMES,
  VERBOSITIES,
} from '../core/vocabulary';
