import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DashboardSource } from '../../dashboard/source.js';
import { adminRoutes } from '../../local/admin/admin-api.js';
import { COMMANDS } from '../../scripts/ops.js';

/** The README's tables held to the code: every admin route and every npm script, and nothing more. */
const ROOT = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The first cells of the table under the heading `## <heading>`. */
function firstCells(heading: string): string[] {
  const section = README.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split(' | ')[0]!.slice(2));
}

describe('the README', () => {
  it('lists every admin API route, and no route the admin API does not have', () => {
    const source = { store: {} } as unknown as DashboardSource;
    const routes = adminRoutes({ source, queues: [], peek: () => [], isReady: () => true });
    // Each `METHOD /path` of the table, with its placeholders filled in and its query left out.
    const documented = firstCells('Admin API')
      .flatMap((cell) => [...cell.matchAll(/`(GET|POST|DELETE) ([^`]+)`/g)])
      .map(([, method, path]) => ({
        method: method!,
        path: path!
          .replace(/[[?].*$/, '')
          .replace(/\{[A-Za-z]+\}/g, 'x')
          .replace(/…/g, ''),
      }));
    expect(documented.length).toBeGreaterThan(15);
    for (const route of routes)
      expect(
        documented.some((d) => d.method === route.method && route.pattern.test(d.path)),
        `${route.method} ${route.pattern}`,
      ).toBe(true);
    // `GET /` is the dashboard's page, answered before the routes.
    for (const d of documented.filter((d) => d.path !== '/' && d.path !== ''))
      expect(
        routes.some((route) => d.method === route.method && route.pattern.test(d.path)),
        `${d.method} ${d.path}`,
      ).toBe(true);
  });

  it('lists every npm script in its commands table, and only scripts that exist', () => {
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
        .scripts,
    );
    const named = firstCells('Commands').flatMap((cell) =>
      [...cell.matchAll(/`npm (?:run )?([a-z:]+)/g)].map((m) => m[1]!),
    );
    expect([...new Set(named)].sort()).toEqual([...scripts].sort());
  });

  it('runs, in its examples, only npm scripts that exist and ops commands the CLI has', () => {
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
        .scripts,
    );
    const examples = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((block) => block[1]!).join('\n');
    const runs = [...examples.matchAll(/npm run ([a-z:]+)(?: -- ([a-z-]+))?/g)];
    expect(runs.length).toBeGreaterThan(5);
    for (const [line, script, first] of runs) {
      expect(scripts, line).toContain(script);
      if (script === 'ops') expect(COMMANDS, line).toContain(first);
    }
  });
});
