// sqlConnection(db): the connection SqliteArtifactStore takes, made from the
// SQLite handle of the usual engines. Plain JS, no engine imported: the
// caller opens the database and hands it in.
import { codedError } from "./coded.js";

/** Runs `statements` between BEGIN and COMMIT with `run`, rolling back on a failure. */
function transaction(exec, run, statements) {
  exec("BEGIN IMMEDIATE");
  try {
    for (const { sql, params } of statements) run(sql, params);
    exec("COMMIT");
  } catch (e) {
    exec("ROLLBACK");
    throw e;
  }
}

/**
 * A connection over `db`: a `node:sqlite` `DatabaseSync` (Node 22.5+, and
 * Deno's `node:sqlite`) or a `sql.js` `Database`. Any other object with
 * `query` and `batch` is returned as it is.
 */
export function sqlConnection(db) {
  if (db !== null && typeof db === "object" && typeof db.query === "function" && typeof db.batch === "function") return db;
  if (db !== null && typeof db === "object" && typeof db.export === "function" && typeof db.exec === "function") {
    // sql.js: exec returns [{ columns, values }].
    return {
      query: (sql, params) => db.exec(sql, params)[0]?.values ?? [],
      batch: (statements) => transaction((sql) => db.run(sql), (sql, params) => db.run(sql, params), statements),
    };
  }
  if (db !== null && typeof db === "object" && typeof db.prepare === "function" && typeof db.exec === "function") {
    // node:sqlite DatabaseSync: rows are objects in SELECT order.
    return {
      query: (sql, params) => db.prepare(sql).all(...params),
      batch: (statements) => transaction((sql) => db.exec(sql), (sql, params) => db.prepare(sql).run(...params), statements),
    };
  }
  throw codedError("INVALID_ARGUMENT", "sqlConnection takes a node:sqlite DatabaseSync, a sql.js Database, or an object with query and batch");
}
