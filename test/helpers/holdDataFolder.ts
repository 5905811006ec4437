// Run as a child process by tests: takes the data folder given as argument, says so, and holds it until killed.
import { takeDataFolder } from "../../src/storage/dataFolder";

takeDataFolder(process.argv[2] as string, "cli");
process.stdout.write("held\n");
setInterval(() => {}, 60_000);
