// The edit/write proposal logic is shared with the CLI's tools; it lives with them.
export { MAX_DIFF_CHARS, proposeEdit, proposeWrite, unifiedDiff } from '../node/tools/proposedChange';
export type { ProposedChange } from '../node/tools/proposedChange';
