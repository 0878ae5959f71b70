import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * The preset dictionary of codec 1: the envelope's keys, the event names, and the Changes and
 * FieldValues keys the spec lists for created events. Deflate finds them here instead of spelling
 * them out, so a 1.1 KB contact.created compresses to about 300 bytes and a changed event to under
 * 100.
 *
 * Part of the stored format: never edit it. A better dictionary is a new codec byte (and a new
 * constant) next to this one, and the old one stays readable.
 */
const DICTIONARY_V1 = Buffer.from(
  [
    '{"EventId":"","Timestamp":"","Changes":["contact_id","associate_id","department",',
    '"updated_associate_id","updated","updatedCount"],"Event":"contact.changed","PrimaryKey":1234,',
    '"ContextIdentifier":"Cust12345","ChangedByAssociateId":5,"WebhookName":"crm-webhook-receiver",',
    '"Entity":"contact"}',
    '["appointment_id","suggestedDocumentId","status","task_idx","endDate","document_id","activeLinks",',
    '"assignedBy","alarm","done","updatedCount","contact_id","emailId","lagTime","priority_idx",',
    '"associate_id","userdef_id","group_idx","recurrenceRuleId","private","do_by","location",',
    '"invitedPersonId","registered_associate_id","preferredTZLocation","updated","project_id",',
    '"rejectReason","sale_id","person_id","activeDate","rejectCounter","color_index",',
    '"suggestedAppointmentId","leadtime","registered","hasAlarm","alldayEvent","text_id",',
    '"updated_associate_id","type","userdef2_id","freeBusy","source","isMilestone","mother_id"]',
    '{"activeDate":"2025-05-15T09:00:00","associate_id":5,"contact_id":1234,"do_by":"2025-05-15T09:00:00",',
    '"document_id":0,"endDate":"0001-01-01T00:00:00","modified_appointment_fields":0,"mother_id":0,',
    '"person_id":77,"private":0,"project_id":0,"sale_id":0,"status":1,"task_idx":4,"type":1,',
    '"updated":"0001-01-01T00:00:00","userdef2_id":0,"userdef_id":0}',
    '["contact_id","activeErpLinks","activeInterests","associate_id","business_idx","category_idx",',
    '"country_id","dbi_agent_id","dbi_key","dbi_last_modified","dbi_last_syncronized","deleted",',
    '"department","group_id","kananame","mother_id","name","nomailing","number1","number2","orgNr",',
    '"registered_associate_id","registered","soundEx","source","supportAssociateId","supportLanguageId",',
    '"supportPersonId","text_id","ticketPriorityId","tzLocationId","updated_associate_id","updated",',
    '"updatedCount","userdef_id","userdef2_id","xstop"]',
    '{"activeInterests":0,"associate_id":5,"business_idx":3,"category_idx":2,"country_id":578,',
    '"deleted":0,"DeletedDate":"0001-01-01T00:00:00","registered":"2025-05-14T16:11:02.4593434+02:00",',
    '"registered_associate_id":5,"source":0,"updated":"0001-01-01T00:00:00","userdef2_id":0,"userdef_id":0}',
    '"Event":"contact.created","Entity":"contact","Values":{"associate_id":5,"contact_id":',
    '"activity.changed","activity.deleted","activity.created","Entity":"activity",',
    '"contact.softdeleted","Changes":["deleted","DeletedDate"],"contact.deleted","Changes":[],',
    '"FieldValues":{',
  ].join(''),
);

const CODEC_DEFLATE_V1 = 1;

/**
 * Compresses a delivery body for the events table: one codec byte, then raw deflate with
 * {@link DICTIONARY_V1}. Lossless: {@link decompressBody} gives back the exact string.
 *
 * @example decompressBody(compressBody(raw)) === raw
 */
export function compressBody(body: string): Uint8Array {
  const deflated = deflateRawSync(body, { level: 9, dictionary: DICTIONARY_V1 });
  return Buffer.concat([Buffer.of(CODEC_DEFLATE_V1), deflated]);
}

/**
 * The most a stored delivery body, or any payload part of it, may take after {@link compressBody}.
 * A history item holds one body; a row holds FieldValues from one event and Values from another:
 * 2 × 180 KiB plus keys and bookkeeping stays under DynamoDB's 400 KB item. The ingest parks (200,
 * reason `too-large-for-store`) what does not fit, so a worker never meets it.
 */
export const MAX_STORED_BODY_BYTES = 180 * 1024;

/** What deflate adds at worst to a body it cannot shrink (about 0.03 %, plus the codec byte). */
const DEFLATE_SLACK_BYTES = (MAX_STORED_BODY_BYTES >> 10) + 64;

/**
 * True when `body` fits {@link MAX_STORED_BODY_BYTES} once compressed. Bodies below the bound pay
 * nothing (deflate cannot push them over it); only larger ones are deflated to find out.
 *
 * @example fitsStore(JSON.stringify(contactCreated)) === true
 */
export function fitsStore(body: string): boolean {
  const bound = MAX_STORED_BODY_BYTES - DEFLATE_SLACK_BYTES;
  if (body.length * 3 <= bound || Buffer.byteLength(body) <= bound) return true;
  return compressBody(body).length <= MAX_STORED_BODY_BYTES;
}

/** The body {@link compressBody} stored; throws on an unknown codec byte. */
export function decompressBody(stored: Uint8Array): string {
  const codec = stored[0];
  if (codec !== CODEC_DEFLATE_V1) throw new Error(`unknown body codec ${String(codec)}`);
  return inflateRawSync(stored.subarray(1), { dictionary: DICTIONARY_V1 }).toString('utf8');
}
