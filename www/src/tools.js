// The browser tools the agent may call, and the bridge the
// ToolInterruptHandler calls them through. Each gets the call's AbortSignal,
// aborted when the call times out.

/**
 * The tools as the model is offered them (`timeoutMs` is each call's
 * deadline; `needsApproval` makes the run stop and ask before the call runs).
 */
export const TOOL_SPECS = [
  {
    name: "fetch_url",
    description: "Fetches a URL and returns its text.",
    parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
    timeoutMs: 10_000,
  },
  {
    name: "read_file",
    description: "Reads a file the user dropped on the page (or the built-in config.env).",
    parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    timeoutMs: 5_000,
  },
  {
    name: "write_file",
    description: "Writes a file on the page's shelf, replacing one of the same name. Asks the user first.",
    parameters: {
      type: "object",
      properties: { name: { type: "string" }, text: { type: "string" } },
      required: ["name", "text"],
    },
    timeoutMs: 5_000,
    needsApproval: true,
  },
  {
    name: "slow_tool",
    description: "Waits longer than its deadline allows: it always times out.",
    parameters: { type: "object", properties: { seconds: { type: "number" } } },
    timeoutMs: 1_500,
  },
  {
    name: "broken_tool",
    description: "Always fails.",
    parameters: { type: "object", properties: {} },
    timeoutMs: 5_000,
  },
];

/** A built-in file with secrets in it, to show redaction. */
const BUILT_IN_FILES = {
  "config.env": [
    "# deployment settings",
    "REGION=eu-west-1",
    "AWS_ACCESS_KEY_ID=AKIAZ7Q2XJ4LMN5PQR3T",
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Ke3x9",
    "GITHUB_TOKEN=ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
    "LOG_LEVEL=info",
  ].join("\n"),
};

/** The files `read_file` can read: the built-in ones and those the user added. */
export class FileShelf {
  #files = new Map(Object.entries(BUILT_IN_FILES));

  /** Adds the `File`s of an input or a drop. */
  async add(files) {
    for (const file of files) this.#files.set(file.name, await file.text());
  }

  /** The names on the shelf. */
  names() {
    return [...this.#files.keys()];
  }

  /** A file's text, or undefined. */
  get(name) {
    return this.#files.get(name);
  }

  /** Writes (or replaces) the file `name`. */
  set(name, text) {
    this.#files.set(name, text);
  }
}

/** Waits `ms`, or rejects when `signal` aborts. */
function wait(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason ?? new Error("aborted"));
    });
  });
}

/** The bridge: `(name, args, { signal }) => output`; a thrown error is the call's error. */
export function makeBridge(shelf) {
  return async (name, args, { signal }) => {
    switch (name) {
      case "fetch_url": {
        const response = await fetch(new URL(String(args.url ?? ""), location.href), { signal });
        if (!response.ok) throw new Error(`HTTP ${response.status} for ${args.url}`);
        return await response.text();
      }
      case "read_file": {
        const text = shelf.get(String(args.name ?? ""));
        if (text === undefined) throw new Error(`no file named ${args.name}; have: ${shelf.names().join(", ")}`);
        return text;
      }
      case "write_file": {
        const name = String(args.name ?? "");
        if (!name) throw new Error("write_file needs a file name");
        const text = String(args.text ?? "");
        shelf.set(name, text);
        return `wrote ${text.length} characters to ${name}`;
      }
      case "slow_tool":
        await wait(Number(args.seconds ?? 5) * 1000, signal);
        return "finished";
      case "broken_tool":
        throw new Error("the broken tool failed, as it always does");
      default:
        throw new Error(`unknown tool ${name}`);
    }
  };
}
