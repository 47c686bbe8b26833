import type { SpillPort } from '../core/agent/toolOutput';
import type { AgentTool } from '../core/agent/tools';
import type { SplitpointSettings } from '../core/config/settings';
import type { SessionStore } from '../core/session/sessionStore';
import type { Clock, IdSource } from '../core/session/storage';
import type { TokenLedger } from '../core/tokens/tokenLedger';
import type { ApprovalView, HostToWebview, SessionListItem, ViewSnapshot } from '../protocol/messages';
import type { ApprovalBroker, ApprovalCall, ApprovalPreview } from './approvals';
import type { ControllerEnvironment } from './controllerEnvironment';
import type { HostLog } from './log';

/** What a SessionController is given: the session, the ports to the model and the workspace, and the host's hooks. */
export interface ControllerDeps {
  store: SessionStore;
  ledger: TokenLedger;
  env: ControllerEnvironment;
  /** The workspace tools (read/list/search/edit/write/run); recall and pin are added here. */
  workspaceTools: (broker: ApprovalBroker) => AgentTool[];
  approvalPreview: (call: ApprovalCall) => Promise<ApprovalPreview>;
  spill?: SpillPort;
  clock: Clock;
  ids: IdSource;
  post: (msg: HostToWebview) => void;
  log: HostLog;
  /** The session list and this session's entry, from the host's library. */
  sessions: () => { session: SessionListItem; sessions: SessionListItem[] };
  connection: () => ViewSnapshot['connection'];
  trusted: () => boolean;
  /** Persist a strategy chosen in the view (the host writes the setting). */
  setStrategy: (s: SplitpointSettings['strategy']) => void;
  /** Asks before something the user made is thrown away (a modal in VS Code); without it, nothing is asked. */
  confirm?: (message: string, action: string) => Promise<boolean>;
  /** An agent error, for the host to turn into an actionable notification. */
  onError?: (message: string) => void;
  onApprovalAsked?: (view: ApprovalView) => void;
  onApprovalResolved?: (callId: string) => void;
  /** Gauge, depth or running state changed (status bar, context keys). */
  onStateChange?: () => void;
  /**
   * False while nobody would receive session deltas (the view is hidden and
   * nothing else listens): the controller then builds none, and the view gets
   * a full snapshot when it is shown again. Default: always true.
   */
  wantsDeltas?: () => boolean;
}
