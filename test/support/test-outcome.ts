import type { TestContext } from "node:test";

/**
 * Whether the test has failed, read in its after-hooks (to print the logs it kept): Node's
 * TestContext.passed, which the @types/node in use does not declare yet.
 */
export function testFailed(t: TestContext): boolean {
  return (t as TestContext & { readonly passed?: boolean }).passed === false;
}
