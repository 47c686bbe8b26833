/** The compaction panel's plan line: what the planner chose, predicted against measured, and the cache's share. */
import type { CompactionView, PlanOptionView } from '../../src/protocol/messages';
import { clear, h } from '../dom';
import { deviation, workerTotalsText } from '../projection';

/** The planner's choice, predicted against measured; the alternatives it weighed behind a disclosure. */
export function renderPlan(into: HTMLElement, c: CompactionView): void {
  clear(into);
  const p = c.plan;
  const measured = p?.measuredMs ?? c.totals?.wallMs ?? null;
  if (!p && measured === null) return;
  const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const predicted = (o: PlanOptionView) => (o.predictedMs !== null ? sec(o.predictedMs) : 'no prediction');
  const forecast = p?.chosen.predictedMs ?? null;
  const line = p
    ? `Plan: ${p.chosen.label} — ${forecast !== null ? `predicted ${sec(forecast)}` : 'no prediction'}` +
      (measured !== null ? `, measured ${sec(measured)}${forecast !== null ? ` (${deviation(measured, forecast)})` : ''}` : '')
    : `Took ${sec(measured!)}`;
  into.append(h('span', { class: 'cp-plan-line', text: line }));
  // A shared server's other work is why a prediction is slower than on an idle one: say what was counted.
  if (p?.serverLoad) into.append(h('span', { class: 'cp-plan-load muted', text: `Planned around ${p.serverLoad}` }));
  if (p && p.alternatives.length) {
    const list = h('ul', { class: 'cp-alts' });
    for (const a of p.alternatives)
      list.append(h('li', { text: `${a.label}: ${predicted(a)}${a.excluded ? ` (ruled out: ${a.excluded})` : ''}` }));
    into.append(
      h(
        'details',
        { class: 'cp-plan-alts' },
        h('summary', { text: `${p.alternatives.length} other plan${p.alternatives.length === 1 ? '' : 's'} · ${p.profile}` }),
        list,
      ),
    );
  }
  if (c.totals) {
    into.append(
      h(
        'details',
        { class: 'cp-cache' },
        h('summary', { text: 'Workers and cache' }),
        h('span', { class: 'muted', text: workerTotalsText(c.totals) }),
      ),
    );
  }
}
