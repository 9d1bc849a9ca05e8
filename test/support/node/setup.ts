import { createRequire } from "node:module";
import { neonConfig } from "@neondatabase/serverless";

// In Node the Neon driver needs a WebSocket implementation; ws's CommonJS entry is the server-side one.
const require = createRequire(import.meta.url);
neonConfig.webSocketConstructor = require("ws");
