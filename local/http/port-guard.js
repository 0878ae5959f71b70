// The guard in front of every port `npm start` opens, so that no web page can use one (types in
// port-guard.d.ts). Plain JavaScript: dynalite's worker thread (../emulators/dynamo-worker.cjs) loads it too, and
// that thread has no TypeScript loader.
//
// A page in the developer's browser can reach any loopback port: it can find the emulators' ports by
// scanning, and send what a browser sends without asking (a form POST, an image's GET, a no-cors
// fetch). What keeps it out:
// - Host must be 127.0.0.1:<port> or localhost:<port>, the port the request arrived on: a DNS-rebound
//   name that points at 127.0.0.1 carries its own name.
// - An Origin header, which browsers add to cross-site POSTs and to every fetch, is refused (on the
//   admin port, all but its own); so is OPTIONS, a CORS preflight.
// - No answer carries an Access-Control-* header, whatever the listener sets (dynalite answers any
//   Origin with `Access-Control-Allow-Origin: *`): a page can never read an answer.
// - On the emulators' ports (SQS, DynamoDB, EventBridge), the request must carry what the AWS SDK
//   sends: a SigV4 Authorization header whose credential is the runtime's access key id. A page cannot
//   set Authorization without a preflight, so this also refuses the requests a browser sends without
//   Origin (an <img> GET, a navigation). The signature itself is not verified: the key is a fixed,
//   published value, so a valid signature would prove nothing more than the header does, and
//   verifying would mean buffering and hashing every body before the emulator reads it.

/** The runtime's own credentials: its SDK clients sign with them, and the emulators accept only them. */
export const LOCAL_CREDENTIALS = Object.freeze({ accessKeyId: 'local', secretAccessKey: 'local' });

const CREDENTIAL = /^AWS4-HMAC-SHA256 Credential=([^/\s,]+)\//;
const CORS = /^access-control-/i;

/**
 * Why `req` is refused, or undefined when it may be served.
 * @param {import('node:http').IncomingMessage} req
 * @param {{ sameOrigin?: boolean, accessKeyId?: string }} rules
 * @returns {string | undefined}
 */
export function refusal(req, rules) {
  const port = req.socket.localPort;
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  if (!hosts.includes(req.headers.host?.toLowerCase() ?? ''))
    return `Host must be 127.0.0.1:${port} or localhost:${port}`;
  const origin = req.headers.origin?.toLowerCase();
  if (origin !== undefined && !(rules.sameOrigin && hosts.some((host) => origin === `http://${host}`)))
    return 'cross-origin requests are refused';
  if (req.method === 'OPTIONS')
    return 'OPTIONS (a CORS preflight) is refused: no web page may call this port';
  if (
    rules.accessKeyId !== undefined &&
    CREDENTIAL.exec(req.headers.authorization ?? '')?.[1] !== rules.accessKeyId
  )
    return `requests must be signed (AWS SigV4) with the local runtime's access key id ${rules.accessKeyId}`;
  return undefined;
}

/**
 * Wraps a request listener of a loopback port: a request `refusal` names is answered 403 by `refuse`
 * (an AWS JSON error by default, which the SDK throws as AccessDeniedException) with its body unread,
 * and no answer carries an Access-Control-* header.
 */
export function guardPort(rules, listener) {
  const refuse = rules.refuse ?? refuseAsAws;
  return withoutCors((req, res) => {
    const reason = refusal(req, rules);
    if (reason === undefined) return listener(req, res);
    req.resume();
    refuse(res, reason);
  });
}

/** `guardPort` for an emulator's port: only requests signed with the runtime's access key id. */
export function guardEmulator(listener) {
  return guardPort({ accessKeyId: LOCAL_CREDENTIALS.accessKeyId }, listener);
}

/** Wraps a request listener so that no answer carries an Access-Control-* header (the public ingest). */
export function withoutCors(listener) {
  return (req, res) => {
    const writeHead = res.writeHead;
    // Every answer goes through writeHead, including one written with setHeader and end().
    res.writeHead = function (status, ...rest) {
      for (const name of this.getHeaderNames()) if (CORS.test(name)) this.removeHeader(name);
      const headers = rest.at(-1);
      if (Array.isArray(headers)) {
        rest[rest.length - 1] = headers.flatMap((value, i) =>
          i % 2 === 0 ? (CORS.test(value) ? [] : [value, headers[i + 1]]) : [],
        );
      } else if (typeof headers === 'object' && headers !== null) {
        rest[rest.length - 1] = Object.fromEntries(
          Object.entries(headers).filter(([name]) => !CORS.test(name)),
        );
      }
      return writeHead.call(this, status, ...rest);
    };
    return listener(req, res);
  };
}

function refuseAsAws(res, reason) {
  const body = JSON.stringify({ __type: 'AccessDeniedException', message: reason });
  res.writeHead(403, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(body),
    'x-amzn-errortype': 'AccessDeniedException',
  });
  res.end(body);
}
