// The e5 fixture (../shared/testdata/locomo-dev/e5-small, read in place) as
// an embedder: each text looked up by the role it is asked with (a question
// as `query`, a turn as `passage`), as a host running multilingual-e5-small
// would embed it. A text not in the fixture is a miss: the benchmark fails
// on any, since it would be measuring a zero vector.
import { existsSync, readFileSync } from "node:fs";

/** The fixture in `dir`, or null when it is not there. */
export function e5Fixture(dir) {
  if (!existsSync(`${dir}keys.json`)) return null;
  const { items } = JSON.parse(readFileSync(`${dir}keys.json`, "utf8"));
  const bytes = readFileSync(`${dir}vectors.f32`);
  const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const dim = all.length / items.length;
  const rows = new Map(items.map(([kind, text], i) => [`${kind}\u0000${text}`, i]));
  const misses = [];
  /** The vector of `text` as `role`; a miss is recorded and answered with zeros. */
  const vector = (text, role) => {
    const i = rows.get(`${role}\u0000${text}`);
    if (i === undefined) {
      misses.push(`${role}: ${text.slice(0, 80)}`);
      return new Float32Array(dim);
    }
    return all.subarray(i * dim, (i + 1) * dim);
  };
  /** The library's embedder: `(texts, { role }) => vectors`, counting the texts asked. */
  const asked = { query: 0, passage: 0 };
  const embed = async (texts, { role }) => {
    asked[role] += texts.length;
    return texts.map((t) => vector(t, role));
  };
  /**
   * The same embedder as a model embedding `rate` texts per second one
   * batch after another (two batches asked at once queue): what a host with
   * the live model on a shared CPU sees.
   */
  const slow = (rate) => {
    let free = 0;
    const stats = { query: 0, passage: 0, batches: 0 };
    const embedSlowly = (texts, { role }) => {
      stats[role] += texts.length;
      stats.batches += 1;
      const start = Math.max(performance.now(), free);
      free = start + (texts.length / rate) * 1000;
      return new Promise((resolve) => setTimeout(() => resolve(texts.map((t) => vector(t, role))), free - performance.now()));
    };
    return { embed: embedSlowly, stats };
  };
  return { vector, embed, slow, misses, asked };
}

/** The cosine of two L2-normalised vectors. */
export function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}
