import { test } from "node:test";
import assert from "node:assert/strict";
import { ErrorClass } from "@driftless/api";
import { fileErrorClass } from "./render-error.ts";

test("a file error preparing a render is the commit's to fix only when the tree is in the way", () => {
  const errno = (code: string) => Object.assign(new Error(code), { code });
  for (const code of ["EACCES", "EPERM", "EROFS", "ENOTDIR", "EEXIST", "EISDIR"])
    assert.equal(fileErrorClass(errno(code)), ErrorClass.Terminal, code);
  // The machine's trouble passes: the next pass tries again with the queue's backoff.
  for (const code of ["ENOSPC", "EMFILE", "EIO", "ENFILE"])
    assert.equal(fileErrorClass(errno(code)), ErrorClass.Retry, code);
  assert.equal(fileErrorClass(new Error("no code")), ErrorClass.Retry);
});
