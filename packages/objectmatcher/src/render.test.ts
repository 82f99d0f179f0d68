import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { declaredSecret, liveSecret } from "./testdata/configmap.ts";
import { declaredDeployment, liveDeployment } from "./testdata/deployment.ts";
import { at, edit, list, maker, obj, withRecord } from "./testdata/harness.ts";

describe("rendering", () => {
  it("shows one line per changed path with the live and declared values", () => {
    const applied = edit(declaredDeployment(), (o) => (at(o, "metadata.labels")["tier"] = "web"));
    const live = withRecord(
      edit(liveDeployment(), (o) => {
        at(o, "metadata.labels")["tier"] = "web";
        at(o, "spec.template.spec.containers.0")["image"] = "nginx:1.25";
      }),
      applied,
    );
    const declared = edit(declaredDeployment(), (o) => {
      at(o, "spec")["replicas"] = 5;
      list(o, "spec.template.spec.containers").push({ name: "sidecar", image: "envoy:1.30" });
    });
    assert.equal(
      maker.calculate(live, declared).render(),
      [
        "apps/v1 Deployment shop/web: 4 changes",
        '  - metadata.labels.tier: "web"',
        "  ~ spec.replicas: 3 -> 5",
        '  + spec.template.spec.containers[name="sidecar"]: {"image":"envoy:1.30","name":"sidecar"}',
        '  ~ spec.template.spec.containers[name="web"].image: "nginx:1.25" -> "nginx:1.27"',
      ].join("\n"),
    );
  });

  it("says so when there is nothing to do", () => {
    assert.equal(
      maker.calculate(withRecord(liveDeployment(), declaredDeployment()), declaredDeployment()).render(),
      "apps/v1 Deployment shop/web: no changes",
    );
  });

  it("is stable whatever the key order of the inputs", () => {
    const declared = edit(declaredDeployment(), (o) => {
      at(o, "spec")["replicas"] = 5;
      at(o, "spec")["minReadySeconds"] = 10;
    });
    const reversed = JSON.parse(JSON.stringify(declared), (_key, value: unknown) =>
      value && typeof value === "object" && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).reverse())
        : value,
    ) as typeof declared;
    const live = withRecord(liveDeployment(), declaredDeployment());
    assert.equal(maker.calculate(live, declared).render(), maker.calculate(live, reversed).render());
  });

  it("quotes keys that are not identifiers and cuts long values", () => {
    const declared = edit(
      declaredDeployment(),
      (o) => (at(o, "metadata.labels")["app.kubernetes.io/name"] = "x".repeat(300)),
    );
    const text = maker
      .calculate(withRecord(liveDeployment(), declaredDeployment()), declared)
      .render({ maxValueLength: 20 });
    assert.match(text, /\+ metadata\.labels\["app\.kubernetes\.io\/name"\]: "x{19}…\(282 more characters\)/);
  });

  it("never prints Secret values", () => {
    const live = withRecord(
      edit(liveSecret(), (o) => (obj(o, "data")["password"] = "b2xk")),
      declaredSecret(),
    );
    const text = maker.calculate(live, declaredSecret()).render();
    assert.equal(
      text,
      ["v1 Secret shop/web-credentials: 1 change", '  ~ data.password: "<redacted>" -> "<redacted>"'].join("\n"),
    );
  });
});
