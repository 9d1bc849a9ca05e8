import { env } from "cloudflare:test";

/**
 * Which query path answers insights requests in this test project. The `http` project runs the
 * Worker as deployed (ROLLUPS "on"); the `http-exact` project runs the insights files again with
 * ROLLUPS "off", so every differential check meets both paths.
 */
export const ROLLUPS_ON = env.ROLLUPS !== "off";
