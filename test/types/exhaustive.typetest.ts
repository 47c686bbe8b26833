/**
 * Compiled by the typecheck (`tsc -p .`), never run. Each `@ts-expect-error`
 * below must stay an error: if a table stopped being exhaustive, the directive
 * would be unused and the typecheck would fail.
 */
import type { AgentEvent, AgentEventTable } from '../../src/core/agent/events';
import type { HandlerTable } from '../../src/host/webviewDispatch';
import { webviewHandlers } from '../../src/host/webviewDispatch';
import { controllerAgentEvents } from '../../src/host/agentEventLog';
import type { AgentEventSink } from '../../src/host/agentEventLog';
import type { WebviewToHost } from '../../src/protocol/messages';

/** The protocol with one more webview message type that nobody handles yet. */
type WithNewMessage = WebviewToHost | { type: 'brand-new'; payload: string };

// @ts-expect-error the dispatch table has no handler for 'brand-new'
export const missingHandler: HandlerTable<WithNewMessage> = webviewHandlers;

// The real protocol: the table is complete.
export const complete: HandlerTable<WebviewToHost> = webviewHandlers;

/** The agent's events with one more type that no consumer handles yet. */
type WithNewEvent = AgentEvent | { type: 'brand-new-event' };
type TableFor<E extends { type: string }> = { [K in E['type']]: (e: Extract<E, { type: K }>, ctx: AgentEventSink) => void };

// @ts-expect-error the controller's agent-event table has no entry for 'brand-new-event'
export const missingEvent: TableFor<WithNewEvent> = controllerAgentEvents;

export const completeEvents: AgentEventTable<AgentEventSink> = controllerAgentEvents;
