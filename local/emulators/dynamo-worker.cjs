// The thread dynamo-emulator.ts starts: dynalite on a loopback port, its tables in memory with a
// LevelDB directory as their durable copy. CommonJS and plain JavaScript, as dynalite is: the thread
// needs no loader.
//
// Why not dynalite's own LevelDB store: under `npm run test:load`, about once in 40 runs, a GetItem
// (and the conditional check of the PutItem after it) saw an item as it was one write earlier, 5 s
// after the newer write had been acknowledged, with nothing else writing that item: a lost update.
// That is the symptom of google/leveldb#320, a compaction bug of LevelDB 1.20 (fixed in 1.21 by
// google/leveldb#339), which every classic-level release up to 3.0.0 bundles: a compaction that runs
// while a snapshot is open can split two versions of one key across two files of a level, and a later
// read returns the older one. classic-level opens a snapshot for every read and iterator. Here LevelDB
// is only written to, and read once, whole, when the thread starts: with no snapshot open while it
// compacts, a compaction keeps one version per key, and no read of a running emulator goes through
// LevelDB at all. Every read is served from memory.
'use strict';

const { createRequire } = require('node:module');
const { parentPort, workerData } = require('node:worker_threads');

// The very modules dynalite loads (its dependencies, resolved from where it is installed).
const fromDynalite = createRequire(workerData.dynalite);
const { MemoryLevel } = fromDynalite('memory-level');
const level = fromDynalite('level');
/** The LevelDB store dynalite would open itself (`level`'s classic-level). */
const DiskLevel = level.Level;

/**
 * A MemoryLevel whose writes are also written, in the same order and before they are acknowledged, to
 * a LevelDB directory (append to its log with write(2), as dynalite's own store does), and which
 * starts from that directory's contents. Memory holds the very bytes LevelDB holds, in LevelDB's
 * order (both as buffers), and they are those dynalite's own store writes (UTF-8 keys, JSON text
 * values), so a directory written by either one opens in the other.
 */
class DurableMemoryLevel extends MemoryLevel {
  #disk;
  /** Writes go to disk one after another, so the disk and the memory apply them in the same order. */
  #writes = Promise.resolve();

  constructor(location, options) {
    super({ ...options, storeEncoding: 'buffer' });
    this.#disk = new DiskLevel(location, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    opened = this;
  }

  async _open(options) {
    // Uncompressed: the files hold the items' JSON as written, so what they still hold can be checked
    // (the values are mostly base64 already, which Snappy barely shrinks).
    await this.#disk.open({ createIfMissing: true, compression: false });
    try {
      const entries = [];
      for await (const [key, value] of this.#disk.iterator()) entries.push({ type: 'put', key, value });
      await super._batch(entries, options);
      // Every key's older versions and deleted keys dropped from the files (the iterator's snapshot is
      // released, none other is open): an item overwritten or deleted before this start, an erased row
      // among them, is then in no file of the directory (docs/privacy.md).
      await this.#disk.compactRange(Buffer.alloc(0), Buffer.alloc(8, 0xff));
    } catch (error) {
      await this.#disk.close().catch(() => undefined);
      throw error;
    }
  }

  #write(toDisk, toMemory) {
    const done = this.#writes.then(async () => {
      await toDisk();
      await toMemory();
    });
    this.#writes = done.catch(() => undefined);
    return done;
  }

  _put(key, value, options) {
    return this.#write(
      () => this.#disk.put(key, value),
      () => super._put(key, value, options),
    );
  }

  _del(key, options) {
    return this.#write(
      () => this.#disk.del(key),
      () => super._del(key, options),
    );
  }

  _batch(operations, options) {
    return this.#write(
      () =>
        this.#disk.batch(
          operations.map(({ type, key, value }) => (type === 'put' ? { type, key, value } : { type, key })),
        ),
      () => super._batch(operations, options),
    );
  }

  /** Not mirrored, so refused: dynalite never clears a range, and a clear that came back at the next start would be worse. */
  async _clear() {
    throw Object.assign(new Error('clear() is not supported by the local DynamoDB store'), {
      code: 'LEVEL_NOT_SUPPORTED',
    });
  }

  async _close() {
    await this.#writes;
    await this.#disk.close();
  }
}

/** The store dynalite opened (it creates exactly one). */
let opened;

// dynalite reads `require('level').Level` when it loads, so this must come first.
level.Level = DurableMemoryLevel;
const dynalite = require(workerData.dynalite);

const server = dynalite({ path: workerData.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.keepAliveTimeout = 65000;
/** dynalite's own listener, served only behind the port guard (installed before the port opens). */
const [serve] = server.listeners('request');
server.removeAllListeners('request');
server.once('error', (error) =>
  parentPort.postMessage({ type: 'error', code: error?.code, message: String(error?.message) }),
);
// The guard first (port-guard.js, an ES module: it refuses what a web page can send and strips
// dynalite's CORS answers); if it cannot load, the thread fails and the runtime does not start. Then
// listen only once the tables are loaded: a directory that cannot be opened (locked, corrupted) is a
// start error naming LevelDB's reason, not a crash at the first request.
import('../http/port-guard.js').then(({ guardEmulator }) => {
  server.on('request', guardEmulator(serve));
  opened.open().then(
    () =>
      server.listen(workerData.port, workerData.host, () =>
        parentPort.postMessage({ type: 'listening', port: server.address().port }),
      ),
    (error) => {
      // abstract-level wraps LevelDB's reason ("IO error: lock …", "Corruption: …") in "failed to open"s.
      let reason = error;
      while (reason?.cause instanceof Error) reason = reason.cause;
      parentPort.postMessage({ type: 'error', code: 'STORE', message: String(reason?.message) });
    },
  );
});
parentPort.on('message', (message) => {
  if (message !== 'close') return;
  server.closeIdleConnections();
  // dynalite closes its store when the server closes, which waits for the writes and closes LevelDB.
  server.close((error) =>
    parentPort.postMessage({ type: 'closed', message: error ? error.message : undefined }),
  );
});
