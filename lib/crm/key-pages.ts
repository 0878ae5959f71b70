import { CrmPagingError } from './errors.js';

/** An archive answer: its rows as the CRM wrote them, its `odata.nextLink` and its clock. */
export interface RawPage {
  rows: Array<Record<string, unknown>>;
  continuation: string | undefined;
  crmTime: number;
}

/** Asks for at most `top` rows whose primary key is in (`after`, `upTo`] (either end open), ordered by key. */
export type AskKeyRange = (
  after: number | undefined,
  upTo: number | undefined,
  top: number,
) => Promise<RawPage>;

/** One page of a listing by primary key: its rows in key order, and the key the next page starts after. */
export interface KeyPage extends RawPage {
  /** Absent on the last page. */
  nextKey: number | undefined;
}

/** Pages asked for at most when a check finds a key left out (a row changed between the two calls). */
const PAGE_ATTEMPTS = 2;

/**
 * The page of rows after `afterKey`, checked rather than trusted: every key a whole number after
 * `afterKey` (else the CRM ignores the key filter and paging would never end), the rows sorted by
 * key, and more to come while a page is full (`pageSize` rows) or the CRM gives a next link. Before
 * paging on past the page's last key, one more call (skipped when the page's keys leave no gap)
 * asks for the keys up to it: one the page left out means the CRM does not answer in key order, and
 * paging on would skip it (or, once, that a row entered the listing between the two calls: the page
 * is asked again). Throws {@link CrmPagingError} (one line) on either.
 */
export async function pageAfterKey(
  ask: AskKeyRange,
  afterKey: number | undefined,
  pageSize: number,
  where: { context: string; what: string },
): Promise<KeyPage> {
  for (let attempt = 1; ; attempt++) {
    const { page, keys } = await sortedPage(ask, afterKey, pageSize, where);
    const more = keys.length > 0 && (page.continuation !== undefined || keys.length >= pageSize);
    if (!more) return { ...page, nextKey: undefined };
    const last = keys.at(-1)!;
    if (afterKey !== undefined && last - afterKey === keys.length) return { ...page, nextKey: last }; // no gap
    const listed = new Set(keys);
    const check = await ask(afterKey, last, keys.length + 1);
    const left = keysIn(check, afterKey, last, where).find((key) => !listed.has(key));
    if (left === undefined) return { ...page, nextKey: last };
    if (attempt >= PAGE_ATTEMPTS)
      throw new CrmPagingError(
        `${where.what}: the CRM left the key ${left} out of a page up to ${last} (it does not answer in the key order asked): paging on would skip rows`,
        where.context,
      );
  }
}

/** The page after `afterKey` with its rows sorted by key, and the keys, each one checked and once. */
async function sortedPage(
  ask: AskKeyRange,
  afterKey: number | undefined,
  pageSize: number,
  where: { context: string; what: string },
): Promise<{ page: RawPage; keys: number[] }> {
  const page = await ask(afterKey, undefined, pageSize);
  const keyed = keysIn(page, afterKey, undefined, where).map((key, index) => ({
    key,
    row: page.rows[index]!,
  }));
  keyed.sort((a, b) => a.key - b.key);
  const keys = keyed.map(({ key }) => key);
  const twice = keys.find((key, index) => keys[index - 1] === key);
  if (twice !== undefined)
    throw new CrmPagingError(
      `${where.what}: the CRM answered the key ${twice} twice in one page`,
      where.context,
    );
  return { page: { ...page, rows: keyed.map(({ row }) => row) }, keys };
}

/** The page's primary keys, each a whole number in (`after`, `upTo`], or a one-line CrmPagingError. */
function keysIn(
  page: RawPage,
  after: number | undefined,
  upTo: number | undefined,
  where: { context: string; what: string },
): number[] {
  return page.rows.map((row) => {
    const key = Number(row.PrimaryKey);
    if (typeof row.PrimaryKey !== 'string' && typeof row.PrimaryKey !== 'number')
      throw new CrmPagingError(`${where.what}: the CRM answered a row without a PrimaryKey`, where.context);
    if (!Number.isSafeInteger(key))
      throw new CrmPagingError(
        `${where.what}: the CRM answered the PrimaryKey ${JSON.stringify(String(row.PrimaryKey).slice(0, 40))}, not a whole number`,
        where.context,
      );
    if ((after !== undefined && key <= after) || (upTo !== undefined && key > upTo))
      throw new CrmPagingError(
        `${where.what}: the CRM answered the key ${key} outside the keys asked for (${after ?? '…'}, ${upTo ?? '…'}]: it ignores the key filter, and paging would not end`,
        where.context,
      );
    return key;
  });
}

/** `$filter` of the rows whose primary key is in (`after`, `upTo`], undefined when both ends are open. */
export function keyRange(
  key: string,
  after: number | undefined,
  upTo: number | undefined,
): string | undefined {
  const bounds = [
    ...(after === undefined ? [] : [`${key} gt ${wholeNumber(after, 'afterKey')}`]),
    ...(upTo === undefined ? [] : [`${key} le ${wholeNumber(upTo)}`]),
  ];
  return bounds.length === 0 ? undefined : bounds.join(' and ');
}

/** A primary key for a `$filter`: a whole number, so nothing else reaches the filter. */
export function wholeNumber(key: number, name = 'a primary key'): number {
  if (!Number.isSafeInteger(key)) throw new RangeError(`${name} must be a whole number, not ${key}`);
  return key;
}
