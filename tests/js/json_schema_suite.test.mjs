// The official JSON-Schema-Test-Suite (draft 2020-12, the default dialect)
// through the package's SchemaRegistry: the jsonschema crate in the separately
// loaded schema module, with schemas, resources and instances crossing
// between the two modules as JSON text. The failures must be exactly the
// known ones the native suite (tests/json_schema_suite.rs) allows.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { SchemaRegistry } from "agent-context-compiler";

const suite = new URL("../fixtures/json-schema-test-suite/", import.meta.url);
const known = JSON.parse(readFileSync(new URL("../fixtures/json_schema_suite_known_failures.json", import.meta.url), "utf8"));

function remotes(dir, rel, out) {
  for (const name of readdirSync(dir).sort()) {
    const url = new URL(name, dir);
    if (statSync(url).isDirectory()) remotes(new URL(`${name}/`, dir), `${rel}${name}/`, out);
    else if (name.endsWith(".json")) out.push([`http://localhost:1234/${rel}${name}`, JSON.parse(readFileSync(url, "utf8"))]);
  }
  return out;
}

test("the official suite, draft 2020-12, through the JS SchemaRegistry", () => {
  const registry = new SchemaRegistry();
  for (const [uri, doc] of remotes(new URL("remotes/", suite), "", [])) {
    // A few remotes belong to other drafts' tests and may not load, as natively.
    try {
      registry.addResource(uri, doc);
    } catch (e) {
      assert.equal(e.code, "INVALID_SCHEMA");
    }
  }
  const dir = new URL("draft2020-12/", suite);
  const failures = [];
  let total = 0;
  let group = 0;
  for (const file of readdirSync(dir).filter((n) => n.endsWith(".json")).sort()) {
    for (const g of JSON.parse(readFileSync(new URL(file, dir), "utf8"))) {
      const tool = `g${group++}`;
      let registered = true;
      try {
        registry.register(tool, g.schema);
      } catch (e) {
        assert.equal(e.code, "INVALID_SCHEMA", e.message);
        registered = false;
      }
      for (const t of g.tests) {
        total += 1;
        const ok = registered && registry.validate(tool, t.data).valid === t.valid;
        if (!ok) failures.push(`draft2020-12/${file} / ${g.description} / ${t.description}`);
      }
    }
  }
  assert.ok(total > 1000, `${total} tests`);
  assert.deepEqual(failures, known["draft2020-12"]);
});
