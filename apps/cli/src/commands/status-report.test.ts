import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
import { render, OutputFormat } from "./status-render.ts";
import { exitCode, syncReport, SyncState } from "../sync-report.ts";
import { imageVersion } from "./version.ts";

const sync = (spec: object, status: object, annotations?: Record<string, string>): KubeObject =>
  ({
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name: "root-sync", namespace: "config-management-system", ...(annotations && { annotations }) },
    spec,
    status,
  }) as KubeObject;
const suspendedBy = { "driftless.dev/suspend": "true" };

/** The Syncing condition Config Sync's reconciler writes when the source of `commit` has one error. */
const sourceFailed = (commit: string): object => ({
  type: "Syncing",
  status: "False",
  reason: "Source",
  message: "Source",
  commit,
  errorSourceRefs: ["status.source.errors"],
  errorSummary: { totalCount: 1, errorCountAfterTruncation: 1 },
});

test("a sync's source is shown as repo@branch/dir with the credentials in its URL masked", () => {
  const report = syncReport(
    sync(
      { sourceType: "git", git: { repo: "https://user:s3cret@git.example/org/repo", branch: "main", dir: "config" } },
      {},
    ),
  );
  assert.equal(report.source.display, "https://***@git.example/org/repo@main/config");
  assert.ok(!JSON.stringify(report).includes("s3cret"));
  assert.equal(report.state, SyncState.Pending);
});

test("a git source without a branch shows the master branch the reconciler fetches, as nomos status does, and the root dir no dir", () => {
  const display = (git: object): string =>
    syncReport(sync({ git: { repo: "https://git.example/r", ...git } }, {})).source.display;
  assert.equal(display({}), "https://git.example/r@master");
  assert.equal(display({ dir: "." }), "https://git.example/r@master");
  assert.equal(display({ branch: "main", revision: "HEAD", dir: "/" }), "https://git.example/r@main");
  assert.equal(display({ branch: "main", revision: "v1.2", dir: "config" }), "https://git.example/r@v1.2/config");
});

test("errors carry their KNV code and phase, and make the sync ERROR and the exit code 1", () => {
  const report = syncReport(
    sync(
      { git: { repo: "r", branch: "main" } },
      {
        source: {
          commit: "abc",
          errors: [{ code: "1006", errorMessage: "KNV1006: bad yaml" }],
          errorSummary: { totalCount: 1 },
        },
        conditions: [sourceFailed("abc")],
      },
    ),
  );
  assert.equal(report.state, SyncState.Error);
  assert.deepEqual(report.errors, [{ phase: "source", code: "KNV1006", message: "bad yaml" }]);
  assert.equal(report.commits.source, "abc");
  assert.equal(exitCode([report]), 1);
  assert.match(render([report], OutputFormat.Text), /error: +KNV1006 \(source\) bad yaml/);
});

test("errors are the Syncing condition's commit's, as nomos status reads them: an earlier apply's are left out", () => {
  const applyError = { code: "2009", errorMessage: "KNV2009: the last apply failed" };
  const status = {
    lastSyncedCommit: "a",
    source: {
      commit: "b",
      errors: [{ code: "1017", errorMessage: "KNV1017: bad" }],
      errorSummary: { totalCount: 1 },
    },
    rendering: { commit: "a" },
    // What the last apply (commit a) reported; a source error for b stops the pass before the sync phase.
    sync: { commit: "a", errors: [applyError], errorSummary: { totalCount: 1 } },
    conditions: [sourceFailed("b")],
  };
  const report = syncReport(sync({ git: { repo: "r", branch: "main" } }, status));
  assert.equal(report.state, SyncState.Error);
  assert.equal(report.errorCount, 1);
  assert.deepEqual(report.errors, [{ phase: "source", code: "KNV1017", message: "bad" }]);
  assert.match(render([report], OutputFormat.Text), /ERROR +b +1 error\(s\)/);

  // The next commit synced: "Sync Completed" with an empty summary is SYNCED, whatever an older block still holds.
  const synced = syncReport(
    sync(
      {},
      {
        ...status,
        source: { commit: "c" },
        rendering: { commit: "a", errors: [applyError], errorSummary: { totalCount: 1 } },
        sync: { commit: "c" },
        conditions: [
          {
            type: "Syncing",
            status: "False",
            reason: "Sync",
            message: "Sync Completed",
            commit: "c",
            errorSummary: {},
          },
        ],
      },
    ),
  );
  assert.equal(synced.state, SyncState.Synced);
  assert.equal(synced.errorCount, 0);
  assert.deepEqual(synced.errors, []);

  // A summary over what the blocks list (truncated): counted by the summary, as nomos's TotalErrorCount.
  const truncated = syncReport(
    sync({}, { ...status, conditions: [{ ...sourceFailed("b"), errorSummary: { totalCount: 3, truncated: true } }] }),
  );
  assert.equal(truncated.errorCount, 3);
  assert.match(render([truncated], OutputFormat.Text), /error: +\.\.\. 2 more/);
});

test("an error keeps Config Sync's link to its code's page, as nomos status prints the errorMessage whole", () => {
  const link = "For more information, see https://g.co/cloud/acm-errors#knv1006";
  const report = syncReport(
    sync(
      { git: { repo: "r", branch: "main" } },
      {
        source: { errors: [{ code: "1006", errorMessage: `KNV1006: bad yaml\n\n${link}` }] },
        conditions: [sourceFailed("")],
      },
    ),
  );
  assert.deepEqual(report.errors, [{ phase: "source", code: "KNV1006", message: `bad yaml\n\n${link}` }]);
  assert.match(
    render([report], OutputFormat.Text),
    new RegExp(`error: +KNV1006 \\(source\\) bad yaml\\n.*\\n +${link}\\n`),
  );
});

test("the Stalled reason is shown when the manager sets it", () => {
  const report = syncReport(
    sync({}, { conditions: [{ type: "Stalled", status: "True", reason: "Deployment", message: "image pull failed" }] }),
  );
  assert.equal(report.state, SyncState.Stalled);
  assert.deepEqual(report.stalled, { reason: "Deployment", message: "image pull failed" });
});

test("a stalled sync counts its stall as its error, as nomos status does (TotalErrorCount 1), and only its stall", () => {
  // The manager's Stalled condition for a reconciler that keeps exiting lists no errors.
  const stall = { type: "Stalled", status: "True", reason: "ReconcilerFailed", message: "forbidden" };
  const report = syncReport(sync({}, { conditions: [stall] }));
  assert.equal(report.errorCount, 1);
  assert.deepEqual(report.errors, [{ phase: "Stalled", code: "", message: "forbidden" }]);
  // The phases' errors from an earlier pass: nomos shows the stall alone.
  const earlier = {
    source: { errors: [{ code: "1006", errorMessage: "KNV1006: x" }], errorSummary: { totalCount: 2 } },
  };
  assert.deepEqual(syncReport(sync({}, { ...earlier, conditions: [stall] })), report);
  const text = render([report], OutputFormat.Text);
  assert.match(text, /STALLED +- +1 error\(s\) +forbidden/);
  assert.match(text, /\n {2}error: +\(Stalled\) forbidden\n/);
  assert.doesNotMatch(text, /more/);
  assert.equal(
    (JSON.parse(render([report], OutputFormat.Json)) as { syncs: { errorCount: number }[] }).syncs[0]?.errorCount,
    1,
  );

  // A stall that lists its errors is counted by its summary, as nomos does.
  const listed = syncReport(
    sync(
      {},
      {
        ...earlier,
        conditions: [
          {
            ...stall,
            reason: "Validation",
            errors: [{ code: "1061", errorMessage: "KNV1061: a" }],
            errorSummary: { totalCount: 2 },
          },
        ],
      },
    ),
  );
  assert.equal(listed.errorCount, 2);
  assert.deepEqual(listed.errors, [{ phase: "Stalled", code: "KNV1061", message: "a" }]);
  assert.match(render([listed], OutputFormat.Text), /error: +\.\.\. 1 more/);
});

test("a stall in Config Sync's shape (its error's text, no errors list, a summary of one) is one error with the message's code", () => {
  const message = "KNV1061: bad spec\n\nFor more information, see https://g.co/cloud/acm-errors#knv1061";
  const stall = {
    type: "Stalled",
    status: "True",
    reason: "Validation",
    message,
    errorSummary: { totalCount: 1, errorCountAfterTruncation: 1 },
  };
  const report = syncReport(sync({}, { conditions: [stall] }));
  assert.equal(report.errorCount, 1);
  assert.deepEqual(report.errors, [{ phase: "Stalled", code: "KNV1061", message: message.slice("KNV1061: ".length) }]);
  assert.deepEqual(report.stalled, { reason: "Validation", message });
});

test("the COMMIT column is the Syncing condition's commit, as nomos status shows it, before any commit synced", () => {
  const commit = "0123456789abcdef0123456789abcdef01234567";
  const failed = syncReport(
    sync(
      { git: { repo: "r", branch: "main" } },
      {
        source: { commit, errors: [{ code: "1006", errorMessage: "KNV1006: bad" }], errorSummary: { totalCount: 1 } },
        conditions: [sourceFailed(commit)],
      },
    ),
  );
  assert.equal(failed.commits.syncing, commit);
  assert.equal(failed.commits.lastSynced, "");
  assert.match(render([failed], OutputFormat.Text), /ERROR +0123456789ab 1 error\(s\)/);
  const json = JSON.parse(render([failed], OutputFormat.Json)) as { syncs: { commits: { syncing: string } }[] };
  assert.equal(json.syncs[0]?.commits.syncing, commit);
  // A stalled sync shows none, as nomos's N/A: its Syncing condition is from before the stall.
  const stalled = syncReport(
    sync(
      {},
      {
        lastSyncedCommit: commit,
        conditions: [
          { type: "Syncing", status: "False", reason: "Sync", message: "Sync Completed", commit },
          { type: "Stalled", status: "True", reason: "ReconcilerFailed", message: "forbidden" },
        ],
      },
    ),
  );
  assert.match(render([stalled], OutputFormat.Text), /STALLED +- +1 error\(s\)/);
});

test("a sync whose reconciler is being set up is RECONCILING, as nomos status says, and exits 1", () => {
  const commit = "0123456789abcdef0123456789abcdef01234567";
  const settingUp = { type: "Reconciling", status: "True", reason: "Deployment", message: "Deployment is rolling out" };
  // A spec change: the new reconciler is not up yet, and the Syncing condition is the last one's.
  const report = syncReport(
    sync(
      { git: { repo: "r", branch: "main" } },
      {
        lastSyncedCommit: commit,
        sync: { commit, errors: [{ code: "2009", errorMessage: "KNV2009: old" }], errorSummary: { totalCount: 1 } },
        conditions: [
          settingUp,
          { type: "Stalled", status: "False", reason: "Deployment" },
          {
            type: "Syncing",
            status: "False",
            reason: "Sync",
            message: "Sync Completed",
            commit,
            errorSourceRefs: ["status.sync.errors"],
            errorSummary: { totalCount: 1 },
          },
        ],
      },
    ),
  );
  assert.equal(report.state, SyncState.Reconciling);
  assert.equal(report.errorCount, 0);
  assert.deepEqual(report.errors, []);
  assert.equal(report.message, "Deployment is rolling out");
  assert.equal(exitCode([report]), 1);
  // No commit, as nomos's N/A: the Syncing condition is the previous reconciler's.
  assert.match(render([report], OutputFormat.Text), /RECONCILING - +0 error\(s\) +Deployment is rolling out/);
  // A new sync, before its reconciler ever ran.
  assert.equal(syncReport(sync({}, { conditions: [settingUp] })).state, SyncState.Reconciling);
  // Stalled wins: the manager keeps restarting a reconciler that keeps failing (both True).
  const failing = syncReport(
    sync(
      {},
      { conditions: [settingUp, { type: "Stalled", status: "True", reason: "ReconcilerFailed", message: "x" }] },
    ),
  );
  assert.equal(failing.state, SyncState.Stalled);
});

test("a suspended sync is SUSPENDED, with what its last comparison found, and exits 1", () => {
  const drift =
    "Suspended by driftless.dev/suspend: nothing is applied, pruned or corrected. Compared with the source at commit abc: 1 missing (ConfigMap a/b)";
  const report = syncReport(
    sync(
      { git: { repo: "r", branch: "main" } },
      {
        lastSyncedCommit: "old",
        conditions: [
          { type: "Syncing", status: "False", reason: "Suspended", message: "Suspended" },
          { type: "Suspended", status: "True", reason: "Suspended", message: drift },
        ],
      },
      suspendedBy,
    ),
  );
  assert.equal(report.state, SyncState.Suspended);
  assert.deepEqual(report.suspended, { message: drift });
  assert.equal(report.message, drift);
  assert.equal(exitCode([report]), 1);
  assert.match(render([report], OutputFormat.Text), /SUSPENDED.*1 missing \(ConfigMap a\/b\)/);
});

test("a sync annotated driftless.dev/suspend is SUSPENDED before any reconciler reports it (none may run), and a resumed one PENDING until its next pass", () => {
  const commit = "0123456789abcdef0123456789abcdef01234567";
  const synced = { type: "Syncing", status: "False", reason: "Sync", message: "Sync Completed", commit };
  const annotated = syncReport(sync({ git: { repo: "r", branch: "main" } }, { conditions: [synced] }, suspendedBy));
  assert.equal(annotated.state, SyncState.Suspended);
  assert.match(annotated.suspended?.message ?? "", /driftless\.dev\/suspend.*has not reported/);
  assert.equal(exitCode([annotated]), 1);
  // Resumed (the annotation gone) while the last suspended pass's condition stands: nothing corrected yet.
  const suspendedPass = [
    { type: "Syncing", status: "False", reason: "Suspended", message: "Suspended", commit },
    { type: "Suspended", status: "True", reason: "Suspended", message: "1 missing" },
  ];
  const resumed = syncReport(sync({ git: { repo: "r", branch: "main" } }, { conditions: suspendedPass }));
  assert.equal(resumed.state, SyncState.Pending);
  assert.equal(resumed.suspended, undefined);
  assert.match(resumed.message ?? "", /Resumed/);
  assert.equal(exitCode([resumed]), 1);
});

test("--resources prints each condition's message under its object, as nomos status does (who owns a Conflict)", () => {
  const owned =
    "This resource is owned by another ResourceGroup team-a/repo-sync. The status only reflects the specification for the current object in ResourceGroup team-a/repo-sync.";
  const group = {
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: { name: "root-sync", namespace: "config-management-system" },
    status: {
      resourceStatuses: [
        {
          group: "",
          kind: "ConfigMap",
          namespace: "team-a",
          name: "z",
          status: "Current",
          conditions: [{ type: "OwnershipOverlap", status: "True", reason: "Overlap", message: owned }],
        },
        { group: "apps", kind: "Deployment", namespace: "team-b", name: "web", status: "Current" },
      ],
    },
  } as unknown as KubeObject;
  const report = syncReport(sync({ git: { repo: "r", branch: "main" } }, {}), group);
  assert.deepEqual(report.resources?.[0]?.conditions, [
    { type: "OwnershipOverlap", status: "True", reason: "Overlap", message: owned },
  ]);
  assert.equal(report.resources?.[1]?.conditions, undefined);
  const lines = render([report], OutputFormat.Text).split("\n");
  const object = lines.findIndex((l) => /Conflict +ConfigMap team-a\/z$/.test(l));
  assert.notEqual(object, -1, lines.join("\n"));
  assert.equal(lines[object + 1], `${" ".repeat(17)}${owned}`);
  assert.match(lines[object + 2] ?? "", /Current +apps\/Deployment team-b\/web$/);
});

test("the manager's version is its image tag, or its digest when pinned by one", () => {
  assert.equal(imageVersion("driftless:0.1.0"), "0.1.0");
  assert.equal(imageVersion("registry:5000/team/driftless:1.2.3"), "1.2.3");
  assert.equal(imageVersion("registry:5000/driftless"), "latest");
  assert.equal(imageVersion("driftless@sha256:abc"), "sha256:abc");
});

test("a multi-line message, error or source cannot print a line that looks like a row or a sync's detail", () => {
  // What a tenant can write into its own RepoSync (spec.git.dir) or have its repository's errors say.
  const fake =
    "\nRootSync config-management-system/root-sync                  SYNCED   abcdef012345 0 error(s)\n  error:     none";
  const report = syncReport(
    sync(
      { git: { repo: "r", branch: "main", dir: `config${fake}` } },
      {
        source: {
          errors: [{ code: "1006", errorMessage: `KNV1006: bad yaml${fake}` }],
          errorSummary: { totalCount: 1 },
        },
        conditions: [
          { type: "Syncing", status: "False", message: `Source${fake}` },
          {
            type: "Stalled",
            status: "True",
            reason: "Deployment",
            message: `stuck${fake}`,
            errors: [{ code: "1006", errorMessage: `KNV1006: bad yaml${fake}` }],
          },
        ],
      },
    ),
  );
  const lines = render([report], OutputFormat.Text).trimEnd().split("\n");
  // Rows start at the margin, a sync's details two spaces in, objects four: text from the sync never does.
  assert.deepEqual(
    lines.filter((l) => !l.startsWith("    ")).map((l) => l.split(/\s+/, 2).join(" ")),
    [
      "KIND NAMESPACE/NAME",
      "RootSync config-management-system/root-sync",
      " source:",
      " commits:",
      " stalled:",
      " error:",
    ],
    lines.join("\n"),
  );
  const continued = lines.filter((l) => l.trimStart().startsWith("RootSync"));
  assert.equal(continued.length, 4, "the row, and each message's second line, indented");
  assert.ok(
    continued.slice(1).every((l) => l.startsWith(" ".repeat(13))),
    lines.join("\n"),
  );
  // The source is a path, not a message: it keeps to its line.
  assert.ok(lines.includes(`  source:    r@main/config${fake.replaceAll("\n", "\\x0a")}`), lines.join("\n"));
});

test("an object's or a sync's name holding a line break keeps to its line in the text view", () => {
  const forged = "RootSync config-management-system/other                      SYNCED   abcdef012345 0 error(s)";
  const named = { ...sync({}, {}), kind: `RootSync\n${forged}` } as KubeObject;
  const group = {
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: { name: "root-sync", namespace: "config-management-system" },
    status: { resourceStatuses: [{ kind: "ConfigMap", namespace: "a", name: `b\n${forged}`, status: "Current" }] },
  } as KubeObject;
  const text = render([syncReport(named, group)], OutputFormat.Text);
  assert.deepEqual(
    text.split("\n").filter((l) => l.trimStart().startsWith(forged)),
    [],
    text,
  );
  assert.ok(text.includes(`ConfigMap a/b\\x0a${forged}`), text);
});

test("every state keeps the columns: SUSPENDED and RECONCILING rows put their commit under COMMIT", () => {
  const commit = "0123456789abcdef0123456789abcdef01234567";
  const syncing = { type: "Syncing", status: "False", reason: "Sync", message: "Sync Completed", commit };
  const reports = [
    syncReport(sync({ git: { repo: "r", branch: "main" } }, { conditions: [syncing] })),
    syncReport(
      sync(
        { git: { repo: "r", branch: "main" } },
        { conditions: [syncing, { type: "Suspended", status: "True", reason: "Suspended", message: "drift" }] },
        suspendedBy,
      ),
    ),
    syncReport(
      sync({}, { conditions: [{ type: "Reconciling", status: "True", reason: "Deployment", message: "rolling" }] }),
    ),
  ];
  assert.deepEqual(
    reports.map((r) => r.state),
    [SyncState.Synced, SyncState.Suspended, SyncState.Reconciling],
  );
  const lines = render(reports, OutputFormat.Text).split("\n");
  const column = lines[0]?.indexOf("COMMIT") ?? -1;
  const rows = lines.filter((l) => l.startsWith("RootSync "));
  assert.equal(rows.length, 3, lines.join("\n"));
  for (const row of rows) assert.match(row.slice(column), /^(0123456789ab|-) /, lines.join("\n"));
});
