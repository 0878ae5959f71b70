import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

describe('docs/capacity.md', () => {
  const doc = readFileSync(new URL('../../docs/capacity.md', import.meta.url), 'utf8');
  // Each block that shows `npm run capacity` without a filter: its command (continuations joined), then the output.
  const blocks = [
    ...doc.matchAll(/```\n\$ npm run capacity -- ((?:[^\n]*\\\n)*[^\n]*)\n([\s\S]*?)\n```/g),
  ].map((match) => ({
    args: match[1]!
      .replace(/\\\n\s*/g, ' ')
      .trim()
      .split(/\s+/),
    shown: match[2]!,
  }));

  it('shows the command’s current output for the 10,000-tenant case in eu-central-1 and us-east-1', async () => {
    const tenThousand = blocks.filter((block) => block.args.includes('10000'));
    expect(tenThousand.map((block) => block.args[block.args.indexOf('--region') + 1])).toEqual([
      'eu-central-1',
      'us-east-1',
    ]);
    for (const block of tenThousand) {
      const run = await runCli('scripts/capacity.ts', block.args);
      expect(run.code).toBe(0);
      // When this fails, the model or what it reads changed: run the command and paste its output.
      expect(run.stdout.trimEnd(), block.args.join(' ')).toBe(block.shown);
    }
  });
});
