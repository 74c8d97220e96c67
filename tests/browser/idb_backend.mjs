// The IndexedDB backend of the store conformance suite (page or worker): a
// fresh database per behaviour, corrupted through a raw IndexedDB connection.
let counter = 0;

function rawOpen(name) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error);
  });
}

/** Flips a byte of an artifact's stored content behind the store's back. */
export async function corruptInIndexedDb(databaseName, artifactId, storeName = "artifacts") {
  const db = await rawOpen(databaseName);
  const tx = db.transaction(storeName, "readwrite");
  const os = tx.objectStore(storeName);
  const req = os.get(artifactId);
  req.onsuccess = () => {
    const record = req.result;
    record.content[0] ^= 1;
    os.put(record, artifactId);
  };
  await done(tx);
  db.close();
}

export function deleteDatabase(name) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.deleteDatabase(name);
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
  });
}

export function indexedDbBackend(lib, tag) {
  return {
    async make() {
      const databaseName = `conformance-${tag}-${Date.now()}-${counter++}`;
      return lib.IndexedDbArtifactStore.open({ databaseName });
    },
    corrupt: (store, id) => corruptInIndexedDb(store.databaseName, id),
    async dispose(store) {
      const name = store.databaseName;
      store.close();
      await deleteDatabase(name);
    },
    largeSize: 5 << 20,
  };
}

export { rawOpen };
