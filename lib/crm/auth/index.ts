import type { CrmCredentials } from '../../config/crm.js';
import { parseAnswer } from '../answer.js';
import { CrmApiError, CrmAuthError } from '../errors.js';
import { AuthenticateAnswerSchema, authenticateBody, ticketOf } from './system-user.js';

/**
 * The one step that turns a tenant's credentials into the headers of an API call. It is swappable:
 * the CRM will replace the system user flow by OAuth 2.0 client credentials, which is another
 * implementation of this interface, and nothing else changes.
 */
export interface Authorizer {
  /** The headers that authorize a call to `context`'s API (authenticating first when needed). */
  headers(context: string): Promise<Record<string, string>>;
  /**
   * After a 401 to a call made with `used`: drops that ticket and says whether authenticating again
   * can help (false for Basic, whose credentials do not change).
   */
  renew(context: string, used: Record<string, string>): boolean;
}

export interface AuthorizerOptions {
  /** The credentials of a tenant; throws when there are none. */
  credentialsFor: (context: string) => CrmCredentials;
  /** `https://{env}.superoffice.com/Login/api/PartnerSystemUser/Authenticate`. */
  loginUrl: URL;
  /** POSTs JSON and answers the parsed JSON of a 200 (the client's bounded, timed exchange). */
  postJson: (url: URL, body: unknown) => Promise<unknown>;
}

/**
 * Basic (on-premises) or the system user flow: sign the system user token, authenticate, and call
 * with `Authorization: SOTicket <ticket>` and `SO-AppToken`. A tenant's ticket is cached (sliding, about
 * 6 hours) until a call is refused with it; concurrent calls share one authentication.
 */
export function createAuthorizer(options: AuthorizerOptions): Authorizer {
  // Per tenant: the authentication (shared by concurrent calls) and, once it answered, its ticket.
  const tickets = new Map<string, { pending: Promise<string>; ticket?: string }>();

  const authenticate = async (context: string, credentials: CrmCredentials & { type: 'systemUser' }) => {
    const body = await options.postJson(options.loginUrl, authenticateBody(credentials, context));
    const what = `POST ${options.loginUrl.pathname}`;
    const answer = parseAnswer(AuthenticateAnswerSchema, body, context, what, 'an Authenticate answer');
    const result = ticketOf(answer);
    if ('refused' in result)
      throw new CrmAuthError(`the CRM refused the system user of ${context}: ${result.refused}`, context);
    return result.ticket;
  };

  return {
    async headers(context): Promise<Record<string, string>> {
      const credentials = options.credentialsFor(context);
      if (credentials.type === 'basic') {
        const token = Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64');
        return { authorization: `Basic ${token}` };
      }
      let held = tickets.get(context);
      if (!held) {
        const entry: { pending: Promise<string>; ticket?: string } = {
          pending: authenticate(context, credentials),
        };
        tickets.set(context, entry);
        entry.pending.then(
          (ticket) => {
            entry.ticket = ticket;
          },
          // A failed authentication is not kept: the next call tries again.
          () => tickets.get(context) === entry && tickets.delete(context),
        );
        held = entry;
      }
      return {
        authorization: `SOTicket ${await held.pending}`,
        'so-apptoken': credentials.applicationToken,
      };
    },
    renew(context, used) {
      if (!used.authorization?.startsWith('SOTicket ')) return false;
      // Dropped only when it is the ticket refused: one another call already renewed is kept.
      const held = tickets.get(context);
      if (held?.ticket !== undefined && used.authorization === `SOTicket ${held.ticket}`)
        tickets.delete(context);
      return true;
    },
  };
}

/** Looks a tenant's credentials up: its own entry, else `*`; a one-line error naming the setting otherwise. */
export function credentialsLookup(byContext: Record<string, CrmCredentials>) {
  return (context: string): CrmCredentials => {
    const credentials = Object.hasOwn(byContext, context) ? byContext[context] : byContext['*'];
    if (!credentials)
      throw new CrmApiError(`CRM_CREDENTIALS has no entry for ${context} and no "*" entry`, context);
    return credentials;
  };
}

/** Whether `byContext` holds credentials for `context`: its own entry or `*` (what the poll may call). */
export function credentialsCover(byContext: Record<string, CrmCredentials>, context: string): boolean {
  return Object.hasOwn(byContext, context) || Object.hasOwn(byContext, '*');
}
