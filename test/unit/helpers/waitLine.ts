import type { AgentEvent } from '../../../src/core/agent/events';
import { controllerAgentEvents, type AgentEventSink } from '../../../src/host/agentEventLog';
import { AgentWait, waitSink } from '../../../src/host/agentWait';

/** What the side bar's wait line said through a turn's events, as the host maps them (agentEventLog.ts). */
export function waitsOf(events: readonly AgentEvent[]): string[] {
  const said: string[] = [];
  let streaming = '';
  const wait = new AgentWait({
    now: () => 0,
    post: (w) => said.push(w ? `${w.on} ${w.detail}` : 'none'),
    inTurn: () => true,
    replyStreaming: () => streaming.length > 0,
  });
  const quiet = () => undefined;
  const sink: AgentEventSink = {
    log: { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet },
    sid: 's',
    notice: quiet,
    streamed: (text) => {
      streaming = text === null ? '' : streaming + text;
      if (text !== null) wait.endSilently();
    },
    replyReset: () => (streaming = ''),
    ...waitSink(wait),
    recordVerdict: quiet,
    held: quiet,
    windowCorrected: quiet,
    error: quiet,
  };
  for (const e of events) (controllerAgentEvents[e.type] as (e: AgentEvent, s: AgentEventSink) => void)(e, sink);
  return said;
}
