package importer

// The programs that read Attocode's stores link the SQLite driver
// themselves (perch-ui does; perch hands them over): so do these tests.
import _ "modernc.org/sqlite"
