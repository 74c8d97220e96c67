// The PostgreSQL and Redis servers of the storage tests: scripts/with-servers.sh
// (run by `npm test`) starts both and names them in ACC_PG_URL and ACC_REDIS_URL.
// A test run without them fails, saying so: it is not skipped.
import pg from "pg";
import Redis from "ioredis";

/** The URL in the environment variable `name`, or an error saying how to get one. */
export function serverUrl(name) {
  const url = process.env[name];
  if (!url) throw new Error(`${name} is not set: run the storage tests through \`npm test\` or \`bash scripts/with-servers.sh node --test ...\``);
  return url;
}

let schemas = 0;

/**
 * A pool whose tables live in a schema of their own (`acc_<tag>_<n>`), so
 * every store starts empty; `drop()` removes the schema and ends the pool.
 */
export async function pgSchema(tag, poolOptions = {}) {
  const url = serverUrl("ACC_PG_URL");
  const schema = `acc_${tag}_${process.pid}_${schemas++}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, ...poolOptions });
  return {
    schema,
    pool,
    /** Another pool over the same schema (another worker). */
    another: (options = {}) => new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, ...options }),
    async drop() {
      await pool.end();
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

let redisDbs = 0;

/** An ioredis client on a key prefix of its own (`t<pid>_<n>:`). */
export function redisClient() {
  const client = new Redis(serverUrl("ACC_REDIS_URL"), { lazyConnect: false, maxRetriesPerRequest: 3 });
  return { client, prefix: `t${process.pid}_${redisDbs++}:` };
}
