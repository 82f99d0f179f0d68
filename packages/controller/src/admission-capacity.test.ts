import { test } from "node:test";
import assert from "node:assert/strict";
import { AdmissionCapacity, ConnectionRoster, DefaultAdmissionLimits } from "./admission-capacity.ts";

const MiB = 1024 * 1024;

test("the defaults: 3 MiB bodies, 32 requests, 24 MiB of bodies at once (8 of the largest), 512k JSON tokens", () => {
  assert.deepEqual(DefaultAdmissionLimits, {
    maxBodyBytes: 3 * MiB,
    maxConcurrent: 32,
    maxBytesInFlight: 24 * MiB,
    maxJsonTokens: 512 * 1024,
  });
});

test("bytes count as received; over the budget the bodies receiving longest are cut, released first", () => {
  const capacity = new AdmissionCapacity({ ...DefaultAdmissionLimits, maxBytesInFlight: 7 * MiB });
  const cut: string[] = [];
  const admit = (name: string) => {
    const ticket = capacity.tryAdmit(() => cut.push(`${name} (${capacity.inFlight.bytes} bytes left)`));
    assert.ok(ticket !== undefined);
    return ticket;
  };
  const [first, second, third] = [admit("first"), admit("second"), admit("third")];
  assert.deepEqual(capacity.inFlight, { requests: 3, bytes: 0 }, "announcing holds nothing");
  first.received(3 * MiB);
  second.received(3 * MiB);
  third.received(MiB);
  assert.deepEqual(cut, []);
  third.received(512 * 1024);
  assert.deepEqual(cut, [`first (${4.5 * MiB} bytes left)`], "the oldest, not the one receiving");
  assert.deepEqual(capacity.inFlight, { requests: 2, bytes: 4.5 * MiB });
  first.received(MiB);
  assert.deepEqual(capacity.inFlight, { requests: 2, bytes: 4.5 * MiB }, "a cut request counts nothing more");
  third.received(10 * MiB);
  assert.deepEqual(capacity.inFlight, { requests: 2, bytes: 6 * MiB }, "never more than maxBodyBytes each");
  second.releaseBytes();
  assert.deepEqual(capacity.inFlight, { requests: 2, bytes: 3 * MiB });
  second.received(MiB);
  third.release();
  third.release();
  assert.deepEqual(capacity.inFlight, { requests: 1, bytes: 0 }, "released once only");
});

test("at the request cap the one receiving its body longest is cut; with every slot answering, none is admitted", () => {
  const capacity = new AdmissionCapacity({ ...DefaultAdmissionLimits, maxConcurrent: 2 });
  const cut: number[] = [];
  const one = capacity.tryAdmit(() => cut.push(1));
  const two = capacity.tryAdmit(() => cut.push(2));
  assert.ok(one !== undefined && two !== undefined);
  one.releaseBytes();
  const three = capacity.tryAdmit(() => cut.push(3));
  assert.ok(three !== undefined);
  assert.deepEqual(cut, [2], "the first has its body and is being answered");
  three.releaseBytes();
  assert.equal(
    capacity.tryAdmit(() => cut.push(4)),
    undefined,
  );
  assert.deepEqual(capacity.inFlight, { requests: 2, bytes: 0 });
});

test("over the connection cap the one without progress longest is closed, never one being answered", () => {
  const roster = new ConnectionRoster(3);
  const closed: string[] = [];
  const add = (key: string) => roster.add(key, () => closed.push(key));
  add("a");
  add("b");
  add("c");
  roster.progressed("a");
  roster.answering("b");
  add("d");
  assert.deepEqual(closed, ["c"]);
  roster.remove("c");
  add("e");
  assert.deepEqual(closed, ["c", "a"]);
  roster.remove("a");
  roster.progressed("b");
  roster.remove("z");
  add("f");
  assert.deepEqual(closed, ["c", "a", "d"]);
  roster.remove("d");
  assert.equal(roster.size, 3);
  roster.closeAll();
  assert.deepEqual(closed.slice(3).sort(), ["b", "e", "f"]);
});

test("over the connection cap one never answered is closed before one that was, however long that one has waited", () => {
  const roster = new ConnectionRoster(3);
  const closed: string[] = [];
  const add = (key: string) => roster.add(key, () => closed.push(key));
  add("api-server");
  roster.progressed("api-server"); // its review's headers
  roster.answering("api-server");
  roster.progressed("api-server"); // answered: kept alive for the next review
  for (const key of ["idle-1", "idle-2", "idle-3"]) add(key);
  assert.deepEqual(closed, ["idle-1"]);
  roster.remove("idle-1");
  roster.progressed("idle-2"); // headers, a body never sent
  add("idle-4");
  assert.deepEqual(closed, ["idle-1", "idle-3"]);
  roster.remove("idle-3");
  roster.remove("idle-2");
  roster.remove("idle-4");
  add("x");
  add("y");
  roster.answering("x");
  roster.progressed("x");
  add("z");
  assert.deepEqual(closed, ["idle-1", "idle-3", "y"], "one answered was closed while one never answered stayed");
  add("w");
  assert.deepEqual(closed, ["idle-1", "idle-3", "y", "z"]);
});
