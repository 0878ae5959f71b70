import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it, vi } from 'vitest';
import { COMMANDS, main } from '../../scripts/ops.js';
import { describedStack, opsClients, outputsWith } from '../support/stack-outputs.js';
import { ROOT } from './package.js';

/*
 * Every command docs/deploy.md gives, taken from its `sh` blocks and from its inline code, is checked to
 * exist and is run offline as far as it can be: `npm run` scripts and their `ops` commands (run against
 * mocked AWS clients), `npx` binaries and files, osls commands and their options (from `--help`), and each
 * `aws <service> <operation> --option` against the AWS SDK's own model of that operation.
 */

const DOC = readFileSync(join(ROOT, 'docs', 'deploy.md'), 'utf8');
const SCRIPTS = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/** Programs a reader needs; jq only because the page says so where it uses it. */
const PROGRAMS = new Set(['npm', 'npx', 'aws', 'jq', 'git', 'openssl']);
/** Shell words that begin a command without being one. */
const KEYWORDS = new Set(['do', 'then', 'else']);
/** Shell syntax and builtins the page uses. */
const SHELL = new Set(['for', 'done', 'while', 'if', 'fi', '[']);

/** The shell lines of the `sh` blocks (continuations joined, comments dropped), and the inline commands. */
function documentedLines(): { fenced: string[]; inline: string[] } {
  const fenced = [...DOC.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) =>
    block[1]!
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((line) => line.replace(/\s+#\s.*$/, '').trim())
      .filter((line) => line !== ''),
  );
  const inline = [...DOC.replace(/```[\s\S]*?```/g, '').matchAll(/`((?:npm run|npx|aws) [^`]+)`/g)].map(
    (m) => m[1]!,
  );
  return { fenced, inline };
}

/**
 * A line's simple commands, each as its words: split at `;`, `&&`, `||`, `|`, `$(` and `)`; a redirection
 * takes its file along; a single-quoted string is one word; `<name>` placeholders become `name`.
 */
function commands(line: string): string[][] {
  const tokens =
    line
      .replace(/<([A-Za-z-]+)>/g, '$1')
      .replace(/"/g, '')
      .match(/'[^']*'|\$\(|&&|\|\||>>|<<<|[;|()<>]|[^\s;|()<>']+/g) ?? [];
  const found: string[][] = [];
  let current: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (['>', '>>', '<', '<<<'].includes(token)) i++;
    else if ([';', '&&', '||', '|', '$(', '(', ')'].includes(token)) {
      found.push(current);
      current = [];
    } else if (current.length > 0 || !KEYWORDS.has(token)) current.push(token.replace(/^'(.*)'$/, '$1'));
  }
  found.push(current);
  return found.filter((words) => words.length > 0);
}

const { fenced, inline } = documentedLines();
const all = [...fenced, ...inline].flatMap(commands);
const invocations = (program: string) => all.filter((words) => words[0] === program);

describe('docs/deploy.md: its table of files', () => {
  it('names every file of infra/', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'deploy.md'), 'utf8');
    const files = readdirSync(join(ROOT, 'infra'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name).slice(ROOT.length + 1));
    expect(files.filter((file) => !doc.includes(`| \`${file}\``) && !doc.includes(`, \`${file}\``))).toEqual(
      [],
    );
  });
});

describe('docs/deploy.md: every command exists', () => {
  it('uses no program but npm, npx, aws, git, openssl and the jq it states', () => {
    const unknown = all
      .map((words) => words[0]!)
      .filter((word) => !PROGRAMS.has(word) && !SHELL.has(word) && !/^[a-z]+=/.test(word) && word !== 'null');
    expect(unknown).toEqual([]);
    if (invocations('jq').length > 0) expect(DOC).toContain('[jq](https://jqlang.org/)');
  });

  it('every `npm run` names a script of package.json, and every `ops` command exists', () => {
    const runs = invocations('npm');
    expect(runs.length).toBeGreaterThan(10);
    for (const words of runs) {
      expect(words[1], words.join(' ')).toBe('run');
      expect(Object.keys(SCRIPTS), words.join(' ')).toContain(words[2]);
      if (words[2] === 'ops') expect(COMMANDS, words.join(' ')).toContain(words[4]);
    }
  });

  it('every `npx` names an installed binary, and the files it runs exist', () => {
    for (const words of invocations('npx')) {
      expect(existsSync(join(ROOT, 'node_modules', '.bin', words[1]!)), words.join(' ')).toBe(true);
      if (words[1] === 'tsx') expect(existsSync(join(ROOT, words[2]!)), words.join(' ')).toBe(true);
      if (words[1] === 'vitest') expect(existsSync(join(ROOT, words[3]!)), words.join(' ')).toBe(true);
    }
  });

  it('every osls command exists and takes the options the page gives it (osls <command> --help)', async () => {
    const uses = new Map<string, Set<string>>();
    for (const words of invocations('npx').filter((w) => w[1] === 'osls')) {
      const rest = words.slice(2);
      const command = rest
        .slice(
          0,
          rest.findIndex((word) => word.startsWith('-')),
        )
        .join(' ');
      const options = uses.get(command) ?? new Set<string>();
      for (const word of rest) if (word.startsWith('--')) options.add(word.split('=')[0]!);
      uses.set(command, options);
    }
    expect([...uses.keys()].sort()).toEqual(['deploy', 'deploy list', 'remove', 'rollback']);
    for (const [command, options] of uses) {
      const { stdout } = await promisify(execFile)(
        join(ROOT, 'node_modules', '.bin', 'osls'),
        [...command.split(' '), '--help'],
        { cwd: ROOT, env: { ...process.env, SLS_TELEMETRY_DISABLED: '1' } },
      );
      for (const option of options)
        expect(stdout, `osls ${command} ${option}`).toMatch(new RegExp(`^${option}\\b`, 'm'));
    }
  }, 120_000);

  it('every `aws <service> <operation>` is an operation of that service, with options it takes', async () => {
    const checked = new Set<string>();
    for (const words of invocations('aws')) {
      const [, service, operation, ...rest] = words;
      const key = `${service} ${operation}`;
      if (CLI_ONLY[key] !== undefined) {
        for (const word of rest) if (word.startsWith('--')) expect(CLI_ONLY[key], key).toContain(word);
        continue;
      }
      const client = CLIENTS[service!];
      expect(client, `aws ${service}: add its SDK client to CLIENTS`).toBeDefined();
      const sdk = (await import(client!)) as Record<string, new (input: object) => { schema: unknown[] }>;
      const pascal = operation!.replace(/(^|-)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());
      const Command = sdk[`${pascal}Command`];
      expect(Command, `aws ${key}`).toBeDefined();
      const input = (new Command!({}).schema[4] as () => unknown[])();
      const members = input[4] as string[];
      for (const word of rest.filter((w) => w.startsWith('--'))) {
        if (GLOBAL_OPTIONS.has(word)) continue;
        const member = word
          .replace(/^--(no-)?/, '')
          .replace(/(^|-)([a-z0-9])/g, (_, __, letter: string) => letter.toUpperCase());
        expect(members, `aws ${key} ${word}`).toContain(member);
      }
      checked.add(key);
    }
    expect(checked.size).toBeGreaterThan(10);
  });
});

/** The SDK client of each `aws` service the page uses. */
const CLIENTS: Record<string, string> = {
  cloudformation: '@aws-sdk/client-cloudformation',
  dynamodb: '@aws-sdk/client-dynamodb',
  iam: '@aws-sdk/client-iam',
  s3api: '@aws-sdk/client-s3',
  sqs: '@aws-sdk/client-sqs',
  ssm: '@aws-sdk/client-ssm',
};
/** The AWS CLI's own options, on every command. */
const GLOBAL_OPTIONS = new Set(['--region', '--query', '--output', '--profile']);
/** Commands of the AWS CLI that are not an API operation, with their options. */
const CLI_ONLY: Record<string, string[]> = { 'logs tail': ['--follow', '--since', '--region'] };

describe('docs/deploy.md: its commands run offline as far as they can', () => {
  it('every `npm run ops` line of a sh block parses and runs against mocked AWS clients', async () => {
    const cloudFormation = mockClient(CloudFormationClient);
    const sqs = mockClient(SQSClient);
    const dynamo = mockClient(DynamoDBDocumentClient);
    const eventBridge = mockClient(EventBridgeClient);
    eventBridge.onAnyCommand().resolves({});
    eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] });
    mockClient(SSMClient).onAnyCommand().resolves({});
    mockClient(CloudWatchClient).onAnyCommand().resolves({});
    cloudFormation.on(DescribeStacksCommand).resolves(
      describedStack(
        outputsWith({
          DepartmentChangesSubscriptionDeadLetterQueueUrl: 'https://sqs/dlq',
          RedriveBusName: 'crm-webhook-receiver-test-redrive',
        }),
      ),
    );
    sqs.onAnyCommand().resolves({});
    sqs.on(GetQueueAttributesCommand).resolves({ Attributes: {} });
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [] });
    sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'h' });
    dynamo.onAnyCommand().resolves({ Items: [] });
    dynamo.on(GetCommand).resolves({});
    vi.stubEnv('SUBSCRIPTIONS_FILE', 'test/deploy/fanout-subscriptions.yml');
    const clients = opsClients();
    const lines = fenced.filter((line) => line.startsWith('npm run ops -- '));
    const ran = new Set<string>();
    for (const line of lines) {
      const argv = commands(
        line
          .replace(/ < .*$/, '')
          .replace(/\[([^\]]*)\]/g, '$1')
          .replace(/<name>/g, 'department-changes')
          .replace(/<queue>/g, 'contact')
          .replace(/\$stage/g, 'test')
          .replace(/\$region/g, 'eu-west-1'),
      )[0]!.slice(4);
      const result = (await main(argv, clients, async () => 'new-key')) as { close?: () => Promise<void> };
      await result?.close?.();
      ran.add(argv[0]!);
    }
    // Every command the CLI has is documented in a block, and ran.
    expect([...ran].sort()).toEqual([...COMMANDS].sort());
  });

  it('the smoke test: `npm run send -- test` reaches the given URL, signed, and exits 0 on its 200', async () => {
    const smoke = fenced.find((line) => line.startsWith('npm run send -- test '));
    expect(smoke).toBeDefined();
    const received: Array<Record<string, unknown>> = [];
    const server = createServer((req, res) => {
      req.resume().on('end', () => {
        received.push({ url: req.url, ...req.headers });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      // The documented https URL, here a plain one on loopback (test/tools/http-client.unit.test.ts covers https).
      const argv = commands(smoke!.replace(/https:\/\/\S+\/webhook/, `http://127.0.0.1:${port}/webhook`))[0]!;
      await promisify(execFile)(
        join(ROOT, 'node_modules', '.bin', 'tsx'),
        ['tools/send.ts', ...argv.slice(4)],
        {
          cwd: ROOT,
          env: { ...process.env, ENV_FILE: '/nonexistent' },
        },
      );
      expect(received).toHaveLength(1);
      expect(received[0]).toMatchObject({ url: '/webhook' });
      expect(Object.keys(received[0]!).some((name) => /-signature$/i.test(name))).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 60_000);
});
