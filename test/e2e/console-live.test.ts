/**
 * The console's live view (server-sent events) carries tenant text: a carriage return in it must not end a
 * line of the stream, or a tenant who can write one RepoSync rewrites what the operator's overview shows
 * (EventSource ends a line at \r as at \n).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { createRepoSync, testEnv, testNamespace, TestRepo } from "../support/index.ts";
import { startConsole } from "../support/console.ts";

interface StreamEvent {
  readonly event: string;
  readonly data: string;
}

/**
 * The first event of the live stream, read as EventSource reads it (lines end at \r\n, \r or \n);
 * `base` is the printed address's secret path.
 */
function firstEvent(port: number, base: string): Promise<StreamEvent[]> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path: `${base}live?view=/`, headers: { host: `127.0.0.1:${port}` } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
          // The server ends an event with a blank line; the first one is all the page gets at once.
          if (!text.endsWith("\n\n")) return;
          req.destroy();
          const events: StreamEvent[] = [];
          let event = "message";
          let data: string[] = [];
          for (const line of text.split(/\r\n|\r|\n/)) {
            if (line === "") {
              if (data.length > 0) events.push({ event, data: data.join("\n") });
              event = "message";
              data = [];
            } else if (line.startsWith("event:")) event = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }
          resolve(events);
        });
      },
    );
    req.on("error", (error) => {
      if (!req.destroyed) reject(error);
    });
    req.end();
  });
}

test("a carriage return in a RepoSync's spec cannot add events to the console's live view or cut it short", async (t) => {
  const evil = await testNamespace(t, "evil");
  const victim = await testNamespace(t, "victim");
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } }));
  await repo.commit("a");
  await createRepoSync(evil, repo, { git: { dir: "config\r\revent: view\rdata: ALL CLEAR\r\r" } });
  await createRepoSync(victim, repo);

  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig);
  const events = await firstEvent(console.port, new URL(console.url).pathname);
  assert.equal(events.length, 1, JSON.stringify(events.map((e) => [e.event, e.data.slice(0, 80)])));
  assert.equal(events[0]?.event, "view");
  assert.ok(events[0]?.data.includes(victim), "the overview lost the other syncs");
  assert.ok(events[0]?.data.includes(evil));
});
