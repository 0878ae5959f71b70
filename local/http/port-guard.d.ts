import type { IncomingMessage, ServerResponse } from 'node:http';

type Listener = (req: IncomingMessage, res: ServerResponse) => unknown;

export interface PortRules {
  /** Serve requests whose Origin is this port's own (the dashboard's page); any other Origin is refused. */
  sameOrigin?: boolean;
  /** Require a SigV4 Authorization header with this access key id (the emulators). */
  accessKeyId?: string;
  /** Writes the 403 answer for `reason`; default an AWS JSON error (AccessDeniedException). */
  refuse?: (res: ServerResponse, reason: string) => void;
}

export declare const LOCAL_CREDENTIALS: Readonly<{ accessKeyId: string; secretAccessKey: string }>;
export declare function refusal(req: IncomingMessage, rules: PortRules): string | undefined;
export declare function guardPort(rules: PortRules, listener: Listener): Listener;
export declare function guardEmulator(listener: Listener): Listener;
export declare function withoutCors(listener: Listener): Listener;
