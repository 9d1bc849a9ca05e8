/** The tables, one file per family; drizzle-kit generates the migrations in drizzle/ from them. */
export * from "./accounts";
export * from "./catalogue";
export * from "./charts";
export * from "./entry-exit-rollups";
export * from "./event-bits";
export * from "./events";
export * from "./profile-activity";
export * from "./profile-summaries";
export * from "./rollups";
export * from "./session-bits";
export * from "./sketches";
