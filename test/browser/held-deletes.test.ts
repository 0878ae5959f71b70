import { describe, expect, it, vi } from 'vitest';
import { crmDashboardForFile, waitForText, withPage } from '../support/browser.js';
import { type GapAnswer, gapUntil, openGap } from '../support/gaps.js';
import { adminJson } from '../support/local-runtime.js';

/**
 * Deletes held back, acted on from the gap's card: `npm start` against the CRM simulator. The gap's
 * reconcile stores the CRM's 30 contacts; the CRM then deletes 20 of them, more than a run deletes
 * (RECONCILE_MAX_DELETES: 10), so the card's Reconcile deletes none and the card says so, with how many
 * and why; its action, once confirmed, reconciles contact again with maxDeletes=20, and the 20 rows are
 * deleted (the 10 others stay).
 */
const SECRET = 'browser-held-secret';
const CONTEXT = 'CustHeld';
const KEPT = 10;
const GONE = 20;
const world = crmDashboardForFile('held', { WEBHOOK_SECRET: SECRET });

/** The gap's last reconcile, once `done` says so. */
async function lastReconcileUntil(done: (run: NonNullable<GapAnswer['lastReconcile']>) => boolean) {
  const gap = await gapUntil(
    world.runtime,
    CONTEXT,
    ({ lastReconcile }) => lastReconcile !== undefined && done(lastReconcile),
    30_000,
  );
  return gap.lastReconcile!;
}

/** The stored contacts' statuses, by primary key. */
async function statuses(ids: readonly number[]): Promise<string[]> {
  return Promise.all(
    ids.map(
      async (id) =>
        (await adminJson<{ status: string }>(world.runtime.adminUrl, `/rows/${CONTEXT}/contact/${id}`)).body
          .status,
    ),
  );
}

/** The row worker applies a run's snapshots after the run completes. */
const SETTLE = { timeout: 15_000, interval: 250 };
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('deletes held back, on the gap’s card', () => {
  it('says which entity, how many and why, and deletes them with maxDeletes once confirmed', async () => {
    for (const id of range(1, KEPT + GONE))
      world.crm.core.change(CONTEXT, { op: 'create', table: 'contact', id });
    const webhook = await world.crm.core.register(CONTEXT, {
      name: 'crm-webhook-receiver',
      events: ['contact.created'],
      targetUrl: world.runtime.webhookUrl,
      secret: SECRET,
    });
    await openGap(world.runtime, CONTEXT, SECRET, webhook.id);
    await lastReconcileUntil((run) => run.status === 'completed');
    await vi.waitFor(
      async () =>
        expect(await statuses(range(1, KEPT + GONE))).toEqual(range(1, KEPT + GONE).map(() => 'active')),
      SETTLE,
    );
    // Deleted in the CRM, whose webhook does not send contact.deleted: only a reconcile finds them gone.
    const gone = range(KEPT + 1, KEPT + GONE);
    for (const id of gone) world.crm.core.change(CONTEXT, { op: 'delete', table: 'contact', id });

    await withPage(world.browser, 'held-deletes', async (page) => {
      await page.goto(`${world.runtime.adminUrl}/`);
      const card = page.locator(`article[data-webhook="${CONTEXT}/${webhook.id}"]`);
      await card.getByRole('button', { name: 'Reconcile' }).click();
      await page.locator('dialog[open]').getByRole('button', { name: 'Reconcile' }).click();
      await lastReconcileUntil((run) => run.reason === 'manual' && run.status === 'completed');

      await page.reload();
      const held = card.locator('.deletes-held li[data-entity="contact"]');
      await waitForText(
        held,
        `⚠ Deletes held back: contact, ${GONE} rows: ${GONE} of its ${KEPT + GONE} stored rows are not in the CRM's list of ids`,
      );
      expect(await held.textContent()).toContain(`reconcile it again with maxDeletes=${GONE}.`);
      // Said once: not again in the run's "Not reconciled" list.
      expect(await card.locator('.last-reconcile .not-reconciled').count()).toBe(0);
      expect(await card.locator('.last-reconcile').textContent()).toContain(', 0 deleted,');
      expect(await statuses(gone)).toEqual(gone.map(() => 'active'));

      await held.getByRole('button', { name: `Delete the ${GONE} held rows` }).click();
      const dialog = page.locator('dialog[open]');
      expect(await dialog.textContent()).toContain(
        `where ERASE_ON_DELETE names contact its personal data is erased`,
      );
      await dialog.getByRole('button', { name: 'Delete rows' }).click();
      await waitForText(
        page.locator('#status'),
        `Reconcile of contact of ${CONTEXT} with maxDeletes=${GONE} queued.`,
      );
      const applied = await lastReconcileUntil(
        (run) => run.status === 'completed' && run.rowsDeleted === GONE,
      );
      expect(applied.deletesHeld).toBeUndefined();
      // The snapshots are queued: the row worker applies them.
      await vi.waitFor(async () => expect(await statuses(gone)).toEqual(gone.map(() => 'deleted')), SETTLE);
      expect(await statuses(range(1, KEPT))).toEqual(range(1, KEPT).map(() => 'active'));

      await page.reload();
      await waitForText(card.locator('.last-reconcile'), `, ${GONE} deleted,`);
      expect(await card.locator('.deletes-held').count()).toBe(0);
    });
  }, 120_000);
});
