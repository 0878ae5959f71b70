import type { IncomingHttpHeaders } from 'node:http';
import { startServer } from './http-server.js';

export interface FakeSsm {
  endpoint: string;
  requests: Array<{ headers: IncomingHttpHeaders; body: string }>;
  parameters: Map<string, string>;
  /** The Type of a parameter, when not SecureString (`String`, `StringList`). */
  types: Map<string, string>;
  /** Errors to answer the next requests with, in order (`ThrottlingException` as SSM sends it: HTTP 400). */
  faults: Array<{ type: string; status: number }>;
  close(): Promise<void>;
}

/** A loopback HTTP server that answers SSM GetParameter (JSON 1.1 protocol) from `parameters`. */
export async function startFakeSsm(): Promise<FakeSsm> {
  const requests: FakeSsm['requests'] = [];
  const parameters = new Map<string, string>();
  const types = new Map<string, string>();
  const faults: FakeSsm['faults'] = [];
  const server = await startServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      requests.push({ headers: req.headers, body });
      const fault = faults.shift();
      res.setHeader('content-type', 'application/x-amz-json-1.1');
      if (fault !== undefined) {
        res.statusCode = fault.status;
        res.end(JSON.stringify({ __type: `com.amazonaws.ssm#${fault.type}`, message: 'Rate exceeded' }));
        return;
      }
      const { Name } = JSON.parse(body) as { Name: string };
      const value = parameters.get(Name);
      if (value === undefined) {
        res.statusCode = 400;
        res.end(JSON.stringify({ __type: 'com.amazonaws.ssm#ParameterNotFound', message: 'not found' }));
        return;
      }
      res.end(
        JSON.stringify({
          Parameter: { Name, Type: types.get(Name) ?? 'SecureString', Value: value, Version: 1 },
        }),
      );
    });
  });
  return { endpoint: `${server.url}/`, requests, parameters, types, faults, close: server.close };
}
