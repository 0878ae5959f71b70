import type { SimulationReport } from './simulate.js';

/** The report as a person reads it. */
export function formatReport(report: SimulationReport): string {
  const lines = [
    ...(report.interrupted
      ? [`interrupted     after ${report.sent} of ${report.deliveries} deliveries; rows not checked`]
      : []),
    `context         ${report.context}`,
    `events          ${report.events} over ${report.rows} rows (${report.deliveries} deliveries)`,
    `sent            ${report.sent}`,
    `accepted        ${report.accepted}`,
    `retried         ${report.retried}`,
    `discarded       ${report.discarded}`,
    ...(report.notSent > 0
      ? [`not sent        ${report.notSent} (webhook stopped: ${report.stoppedBy})`]
      : []),
    ...(Object.keys(report.failures).length > 0
      ? [`failed answers  ${JSON.stringify(report.failures)}`]
      : []),
    `rows checked    ${report.rowsChecked}${report.drained ? '' : ' (queues did NOT drain in time)'}`,
    `mismatches      ${report.mismatches}`,
    ...(report.deadLettered > 0 ? [`dead-lettered   ${report.deadLettered} (see GET /queues)`] : []),
    ...(report.parked > 0 ? [`parked          ${report.parked} (see GET /parked)`] : []),
    `events/s        ${report.eventsPerSecond} (POST to row written; ${report.postsPerSecond} POSTs/s while sending)`,
    `POST latency    p50 ${report.p50Ms} ms, p99 ${report.p99Ms} ms`,
    `time            ${(report.sendMs / 1000).toFixed(1)} s sending + ${(report.drainMs / 1000).toFixed(1)} s draining`,
  ];
  for (const mismatch of report.mismatchDetails) {
    const values = mismatch.fields.map((field) => {
      const pick = (view: unknown) =>
        typeof view === 'object' && view !== null
          ? JSON.stringify((view as Record<string, unknown>)[field])
          : String(view);
      return `${field} expected ${pick(mismatch.expected)?.slice(0, 200)}, got ${pick(mismatch.actual)?.slice(0, 200)}`;
    });
    lines.push(`  mismatch ${mismatch.row}: ${values.join('; ')}`);
    if (mismatch.notInHistory?.length)
      lines.push(`    accepted, not in its history: ${mismatch.notInHistory.join(', ')}`);
    if (mismatch.history?.length) lines.push(`    its history: ${mismatch.history.join(' | ')}`);
  }
  return lines.join('\n');
}
