import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { refusal } from '../../local/http/port-guard.js';
import { type AuthOptions, createAuth, generateAppKeys } from './auth.js';
import { type CallCounter, callKind, createCallCounter } from './calls.js';
import { controlApi } from './control.js';
import { type CrmCore, createCrmCore } from './crm.js';
import { createDispatcher, type DispatcherOptions } from './deliver.js';
import { CrmError } from './errors.js';
import { createFaults, type Faults } from './faults.js';
import {
  type CrmAnswer,
  type CrmRequest,
  notImplemented,
  objectBody,
  readJson,
  writeAnswer,
} from './http.js';
import { restApi } from './rest.js';
import { openStore } from './store.js';
import { tenantRefusal, tenantStateAnswer } from './tenant-state.js';

export interface CrmOptions {
  /** Where the rows and webhooks live (one JSON file per context). */
  dataDir: string;
  /** 0 for any free port. Always bound to 127.0.0.1. */
  port?: number;
  auth?: Partial<AuthOptions>;
  faults?: Faults;
  delivery?: Omit<DispatcherOptions, 'save' | 'log'>;
  log?: (line: string) => void;
}

export interface RunningCrm {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The tenant's REST API base: `<url>/<context>/api/v1`. */
  apiUrl(context: string): string;
  core: CrmCore;
  auth: AuthOptions & { appPrivateKey?: string; issuerPublicKey: string };
  faults: ReturnType<typeof createFaults>;
  /** The API calls served per tenant (`/api/state`, authentication and `/{context}/api/v1/...`). */
  calls: CallCounter;
  stop(): Promise<void>;
}

/**
 * Starts the CRM simulator: rows and webhooks from `dataDir`, deliveries with the real sender's
 * policy, and on 127.0.0.1 its REST API (`/{context}/api/v1/...`, `/api/state/{context}`,
 * `/Login/api/PartnerSystemUser/Authenticate`) and its control API (`/sim/...`). Requests with a
 * foreign Host or Origin are refused, like the local admin API's.
 */
export async function startCrm(options: CrmOptions): Promise<RunningCrm> {
  const log = options.log ?? (() => undefined);
  const store = openStore(options.dataDir);
  const dispatcher = createDispatcher({ ...options.delivery, save: (data) => store.save(data.name), log });
  const core = createCrmCore(store, dispatcher);
  const keys = options.auth?.appPublicKey ? undefined : generateAppKeys();
  const authOptions: AuthOptions = {
    user: 'crm',
    password: 'crm',
    applicationToken: 'sim-app-token',
    systemUserToken: 'SimApp-system-user-token',
    appPublicKey: keys?.publicKey ?? '',
    ticketLifetimeMs: 6 * 3600_000,
    ...options.auth,
  };
  const auth = createAuth(authOptions);
  const faults = createFaults(options.faults);
  const calls = createCallCounter();
  let origin = '';

  const route = async (request: CrmRequest): Promise<CrmAnswer> => {
    const { method, path } = request;
    if (path.startsWith('/sim/')) return controlApi(core, faults, request, calls);
    if (method === 'POST' && path.toLowerCase() === '/login/api/partnersystemuser/authenticate') {
      const body = objectBody(request.body, 'SignedSystemToken, ApplicationToken, ContextIdentifier');
      calls.count(String(body.ContextIdentifier ?? ''), 'authenticate');
      return auth.authenticate(body, (ctx) => `${origin}/${ctx}/api`);
    }
    const state = /^\/api\/state\/([^/]+)$/.exec(path);
    if (state && method === 'GET') {
      const context = decodeURIComponent(state[1]!);
      calls.count(context, 'state');
      return tenantStateAnswer(store.context(context), origin);
    }
    // `/{ctx}/api/v1/...`, or `/{host}/{ctx}/api/v1/...` for a tenant that moved.
    const api = /^(?:\/(h\d+))?\/([^/]+)\/api\/v1(\/.*)?$/i.exec(path);
    if (api) {
      const context = decodeURIComponent(api[2]!);
      calls.count(context, callKind(api[3] ?? '/', request.query));
      const fault = (await faults.check(context)) ?? tenantRefusal(store.context(context), api[1]);
      if (fault) return fault;
      const refused = auth.refuse(context, request.headers);
      if (refused)
        return { status: 401, body: { Error: refused }, headers: { 'www-authenticate': 'Basic, SOTicket' } };
      const tableRefused = faults.refusal(api[3] ?? '/', request.query);
      if (tableRefused) return tableRefused;
      return restApi(core, context, api[3] ?? '/', request);
    }
    return notImplemented(method, path);
  };

  const server: Server = createServer((req, res) => {
    const answer = async (): Promise<CrmAnswer> => {
      const refused = refusal(req, {});
      if (refused) {
        req.resume();
        return { status: 403, body: { Error: refused } };
      }
      const url = new URL(req.url ?? '/', origin);
      const body = await readJson(req);
      return route({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
        origin,
      });
    };
    answer()
      .catch((error: unknown): CrmAnswer => {
        if (error instanceof CrmError) return { status: error.status, body: { Error: error.message } };
        log(
          `could not answer ${req.method} ${req.url}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        return { status: 500, body: { Error: 'the simulator could not answer (see its log)' } };
      })
      .then((answer) => writeAnswer(res, answer))
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    apiUrl: (context) => `${origin}/${context}/api/v1`,
    core,
    auth: { ...authOptions, appPrivateKey: keys?.privateKey, issuerPublicKey: auth.issuerPublicKey },
    faults,
    calls,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      dispatcher.close();
    },
  };
}
