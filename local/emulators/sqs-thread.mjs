// The SQS emulator's worker thread (sqs-emulator.ts starts it): loads sqs-thread.ts with tsx's
// loader, registered for this import only, so the thread runs the TypeScript sources whether the
// runtime runs under tsx or under the test runner.
import { tsImport } from 'tsx/esm/api';

await tsImport('./sqs-thread.ts', import.meta.url);
