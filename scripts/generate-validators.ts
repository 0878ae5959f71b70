/**
 * `npm run generate`: writes lib/generated/validators.js (and its .d.ts) from the zod schemas, with
 * lib/events/codegen.ts. Run it after changing a schema; test/unit/validator.test.ts fails until the
 * checked-in module equals what the schemas generate.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SecretsJsonSchema } from '../lib/config/secrets-schema.js';
import { type GeneratedModule, generateValidatorModule } from '../lib/events/codegen.js';
import { EnvelopeSchema, SCHEMA_BY_EVENT } from '../lib/events/schemas.js';

export const GENERATED_FILES = {
  source: 'lib/generated/validators.js',
  declarations: 'lib/generated/validators.d.ts',
} as const;

/** The module as the schemas generate it now. */
export function generateProjectValidators(): GeneratedModule {
  return generateValidatorModule({
    maps: {
      EVENT_VALIDATORS: Object.fromEntries([...SCHEMA_BY_EVENT].map(([event, schema]) => [event, schema()])),
    },
    functions: { isEnvelope: EnvelopeSchema, isSecretsJson: SecretsJsonSchema },
  });
}

/** The module as checked in. */
export function readProjectValidators(): GeneratedModule {
  return {
    source: readFileSync(GENERATED_FILES.source, 'utf8'),
    declarations: readFileSync(GENERATED_FILES.declarations, 'utf8'),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const generated = generateProjectValidators();
  writeFileSync(GENERATED_FILES.source, generated.source);
  writeFileSync(GENERATED_FILES.declarations, generated.declarations);
  console.log(`wrote ${GENERATED_FILES.source} and ${GENERATED_FILES.declarations}`);
}
