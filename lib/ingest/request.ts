import type { SignatureVerifier } from './signature.js';

/**
 * A request as any transport hands it over, headers in any case. The body is the raw bytes, or the
 * text when the transport already decoded it as UTF-8 (API Gateway does for JSON): signing and
 * forwarding a string uses its UTF-8 bytes, which are the bytes that were received.
 */
export interface DeliveryRequest {
  method: string;
  headers: Record<string, string | undefined>;
  query: Record<string, string | undefined>;
  body: string | Uint8Array;
  receivedAt: Date;
}

/** The checks the ingest applies, merged from configuration once. */
export interface DeliveryPolicy {
  verifier: SignatureVerifier;
  headerPrefix?: string | undefined;
  stateEventToken?: string | undefined;
  allowUnsigned: boolean;
  maxEventAgeSeconds: number;
  /**
   * How far in the future an unauthenticated event (a state event without STATE_EVENT_TOKEN, or an
   * ALLOW_UNSIGNED delivery) may be dated; a forged far-future Timestamp would otherwise win every
   * ordering comparison until a real, newer event arrives. Default 300.
   */
  maxClockSkewSeconds?: number;
  maxBodyBytes: number;
  /**
   * ENTITIES: whether the rows of an entity are stored; undefined stores every entity. Events of
   * another entity are parked (`entity-not-enabled`, answered 200) and can be replayed later.
   */
  entities?: ((entity: string) => boolean) | undefined;
}
