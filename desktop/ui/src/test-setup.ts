// Vitest setup for the component tests: unmount what a test rendered.
import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";

afterEach(() => cleanup());
