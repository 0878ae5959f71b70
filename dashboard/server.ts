import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname } from 'node:path';
import { writeProblem } from '../local/http/problem-response.js';

export interface Dashboard {
  /**
   * Serves the page (`GET /`) and its assets (`GET /dashboard/<file>`), and refuses a POST that a
   * browser sends without the page's token. True when it answered the request.
   */
  intercept(req: IncomingMessage, res: ServerResponse, path: string): boolean;
}

/** The header the page's POSTs carry the token in. */
export const TOKEN_HEADER = 'x-dashboard-token';

const PAGE = new URL('./page/', import.meta.url);
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * The dashboard's page: plain ES modules from `page/`, no build. The page reads only the endpoints
 * listed in `page/api.js` (routes.ts answers them from a `DashboardSource`), so the local admin
 * API and `npm run ops -- dashboard` serve the same page.
 *
 * Writes are POSTs: the Host and Origin checks of the admin API apply, and a POST from a browser (it
 * carries `Origin` or `Sec-Fetch-Site`) must also carry the token generated at each start and embedded
 * in the page, compared in constant time. Tools without those headers (curl) are served as before.
 */
export function createDashboard(token = randomBytes(32).toString('base64url')): Dashboard {
  const assets = new Map<string, Buffer>();
  for (const name of readdirSync(PAGE)) {
    if (TYPES[extname(name)] !== undefined) assets.set(name, readFileSync(new URL(name, PAGE)));
  }
  const index = assets.get('index.html')!.toString('utf8').replace('{{TOKEN}}', token);
  const expected = digest(token);

  return {
    intercept(req, res, path) {
      if ((req.method === 'POST' || req.method === 'DELETE') && fromBrowser(req)) {
        const given = req.headers[TOKEN_HEADER];
        if (typeof given === 'string' && timingSafeEqual(digest(given), expected)) return false;
        req.resume();
        writeProblem(
          res,
          403,
          'dashboard-token',
          `${TOKEN_HEADER}: missing or not this page's token; reload the page`,
          SECURITY_HEADERS,
        );
        return true;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      if (path === '/') return answer(req, res, 200, TYPES['.html']!, index);
      const name = /^\/dashboard\/([\w.-]+)$/.exec(path)?.[1];
      const asset = name === undefined || name === 'index.html' ? undefined : assets.get(name);
      if (asset === undefined) return false;
      return answer(req, res, 200, TYPES[extname(name!)]!, asset);
    },
  };
}

function fromBrowser(req: IncomingMessage): boolean {
  return req.headers.origin !== undefined || req.headers['sec-fetch-site'] !== undefined;
}

/** SHA-256 first, so tokens of any length compare in constant time. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function answer(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
): true {
  req.resume();
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    ...SECURITY_HEADERS,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}
