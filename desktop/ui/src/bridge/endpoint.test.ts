import { describe, expect, it } from "vitest";

import { endpointFromPage, MissingTokenError } from "./endpoint";

describe("endpointFromPage", () => {
  it("connects to /acp on the page's own host with the page's token", () => {
    const endpoint = endpointFromPage("http://127.0.0.1:41234/?token=3f9c0a#session=abc");
    expect(endpoint).toEqual({ socketUrl: "ws://127.0.0.1:41234/acp?token=3f9c0a", cwd: null });
  });

  it("keeps the host name the page was reached at, so the Origin matches it", () => {
    expect(endpointFromPage("http://localhost:9/?token=t").socketUrl).toBe("ws://localhost:9/acp?token=t");
    expect(endpointFromPage("http://[::1]:9/?token=t").socketUrl).toBe("ws://[::1]:9/acp?token=t");
  });

  it("uses wss for a page served over https", () => {
    expect(endpointFromPage("https://box.example:8443/?token=t").socketUrl).toBe(
      "wss://box.example:8443/acp?token=t",
    );
  });

  it("reads a project directory given with the address", () => {
    expect(endpointFromPage("http://127.0.0.1:1/?token=t&cwd=%2Fhome%2Fme%2Fproj").cwd).toBe("/home/me/proj");
  });

  it("refuses a page opened without the token, saying what to open", () => {
    expect(() => endpointFromPage("http://127.0.0.1:41234/")).toThrow(MissingTokenError);
    expect(() => endpointFromPage("http://127.0.0.1:41234/?token=")).toThrow(/address `riot serve` printed/);
  });
});
