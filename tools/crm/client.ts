import { httpRequest } from '../http-client.js';
import { mulberry32 } from '../stream.js';

/** A client of a running simulator's control API (`/sim/...`). */
export function crmClient(url: string, context: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    let answer: Awaited<ReturnType<typeof httpRequest>>;
    try {
      answer = await httpRequest(
        method,
        `${url}${path}`,
        { 'content-type': 'application/json' },
        body === undefined ? undefined : JSON.stringify(body),
      );
    } catch (error) {
      throw new Error(
        `no CRM simulator answers at ${url} (${(error as Error).message}): start it with npm run crm, or set CRM_URL`,
      );
    }
    const parsed = answer.body ? (JSON.parse(answer.body) as Record<string, unknown>) : {};
    if (answer.status !== 200)
      throw new Error(`${method} ${path} answered ${answer.status}: ${String(parsed.Error ?? answer.body)}`);
    return parsed;
  };
  const ctx = encodeURIComponent(context);
  return {
    change: (change: Record<string, unknown>) => call('POST', `/sim/${ctx}/changes`, change),
    rows: (table: string, id?: number) =>
      call('GET', `/sim/${ctx}/rows/${table}${id === undefined ? '' : `/${id}`}`),
    setState: (webhook: number, state: 'Active' | 'Stopped') =>
      call('PUT', `/sim/${ctx}/webhooks/${webhook}/state`, { state }),
    tenant: (body: { state?: string; move?: boolean }) => call('PUT', `/sim/${ctx}/tenant`, body),
    status: () => call('GET', '/sim/status'),
    faults: (faults: Record<string, number | undefined>) => call('PUT', '/sim/faults', faults),
  };
}

export type CrmClient = ReturnType<typeof crmClient>;

export interface StreamPlan {
  /** Changes per second. */
  rate: number;
  /** Rows the stream works on: contacts and appointments alternately, created when missing. */
  rows: number;
  durationMs: number;
  seed?: number;
  /** Stops early (Ctrl-C). */
  signal?: AbortSignal;
}

const CONTACT_FIELDS = ['name', 'department', 'number1', 'orgNr', 'category_idx', 'business_idx'];
const APPOINTMENT_FIELDS = ['status', 'done', 'type', 'location', 'priority_idx', 'project_id'];

/**
 * Drives a running simulator: creates the rows it lacks, then changes them at `rate` per second for
 * the duration (mostly fields of the row's own table, one in ten a phone number, which raises
 * nothing). Returns what it did.
 */
export async function runStream(client: CrmClient, plan: StreamPlan) {
  const random = mulberry32(plan.seed ?? Date.now());
  const rows = Array.from({ length: plan.rows }, (_, i) => ({
    table: i % 2 === 0 ? 'contact' : 'appointment',
    id: 1 + Math.floor(i / 2),
  }));
  const existing = {
    contact: new Set(Object.keys(await client.rows('contact')).map(Number)),
    appointment: new Set(Object.keys(await client.rows('appointment')).map(Number)),
  };
  const counts = { changes: 0, created: 0, events: 0, silent: 0, deliveries: 0 };
  const started = Date.now();
  const interval = 1000 / plan.rate;
  for (let n = 0; Date.now() - started < plan.durationMs && !plan.signal?.aborted; n++) {
    const wait = started + n * interval - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const row = rows[Math.floor(random() * rows.length)]!;
    const known = existing[row.table as keyof typeof existing];
    let change: Record<string, unknown>;
    if (!known.has(row.id)) {
      known.add(row.id);
      counts.created++;
      change = {
        op: 'create',
        table: row.table,
        id: row.id,
        fields: { ...(row.table === 'contact' ? { name: `Contact ${row.id}` } : {}) },
      };
    } else if (row.table === 'contact' && random() < 0.1) {
      change = {
        op: 'change',
        table: 'contact',
        id: row.id,
        fields: { phone: `+47 ${Math.floor(random() * 1e8)}` },
      };
    } else {
      const fields = row.table === 'contact' ? CONTACT_FIELDS : APPOINTMENT_FIELDS;
      const field = fields[Math.floor(random() * fields.length)]!;
      const text = ['name', 'department', 'number1', 'orgNr', 'location'].includes(field);
      change = {
        op: 'change',
        table: row.table,
        id: row.id,
        fields: { [field]: text ? `${field} ${n}` : n % 7 },
      };
    }
    const applied = await client.change(change);
    counts.changes++;
    if (applied.event) counts.events++;
    else counts.silent++;
    counts.deliveries += Number(applied.webhooks ?? 0);
  }
  return { ...counts, seconds: Math.round((Date.now() - started) / 100) / 10 };
}
