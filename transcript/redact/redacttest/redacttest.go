// Package redacttest holds the seeded corpus the redaction tests share:
// one made-up credential of every format perch takes out, each built from
// pieces so that no scanner mistakes this repository for a leak.
package redacttest

import "strings"

// Secret is one seeded credential: Text is how it appears in a session,
// Secret the bytes that must not be left in an export.
type Secret struct {
	Name   string
	Text   string
	Secret string
}

// Home and User are the home directory and user name the corpus uses.
const (
	Home = "/home/zoltanq"
	User = "zoltanq"
)

func rep(s string, n int) string { return strings.Repeat(s, n)[:n] }

// Secrets lists every seeded credential.
func Secrets() []Secret {
	aws := "AKIA" + "Z7QW3RT5YU2IOP4B"
	gh := "ghp_" + "k3Jd8sLq0Wm2Xn5Bv7Cz9Ae4Rt6Yu1Io3Pa8"
	ghFine := "github_pat_" + "11ABCDEFG0" + rep("aZ3kQ9mW2xL7pV5nR8tY4uB6cD1eF0gH", 72)
	slack := "xoxb-" + "2718281828459-3141592653589-" + "kQ9mW2xL7pV5nR8tY4uB6cD1"
	stripe := "sk_live_" + "51Hq8Zr4Kx1Vb7Nw2Lm9Pt3Qs6Df"
	openai := "sk-" + "Qz8rT1vY4nM7kL2pW9xC" + "T3BlbkFJ" + "aB4cD7eF0gH3iJ6kL9mN"
	openaiProj := "sk-proj-" + rep("Xk9Qw2Lm7Zr4Tn8Vb1Hc5Jd3Fs6Gp0", 74) + "T3BlbkFJ" + rep("Pa8Rt6Yu1Io3Kj5Lh7Mg9Nf2Bd4Cs0", 74)
	anthropic := "sk-ant-" + "api03-" + rep("Vb7Nw2Lm9Pt3Qs6DfHq8Zr4Kx1Ja5Ue0Yc", 93) + "AA"
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJzdWIiOiI5ODc2NTQzMjEwIiwibmFtZSI6IlpvbHRhbiJ9" + "." + "Yq3nR8tY4uB6cD1eF0gHkQ9mW2xL7pV5"
	keyBody := "MIIEpAIBAAKCAQEA" + rep("q8Zr4Kx1Vb7Nw2Lm9Pt3Qs6DfHj5Ue0Yc", 64)
	pem := "-----BEGIN RSA " + "PRIVATE KEY-----\n" + keyBody + "\n" + keyBody[:40] + "\n-----END RSA PRIVATE KEY-----"
	cutKeyBody := "MIIEvQIBADANBgkq" + rep("Hk2Lq9Xz4Rm8Vb1Nc6Ta3Wd7Ye5Uf0", 60)
	urlPass := "Pg7vQ2xZ9kW4"
	connPass := "Tr0ub4dor3xQ"
	envToken := "q8Zr4Kx1Vb7Nw2Lm9Pt3"
	jsonToken := "f7Hk2Lq9Xz4Rm8Vb1Nc6"
	return []Secret{
		{"aws-access-key", "export AWS_ACCESS_KEY_ID=" + aws, aws},
		{"github-pat", "git clone https://github.com/o/r (token " + gh + ")", gh},
		{"github-fine-grained", "GH=" + ghFine, ghFine},
		{"slack-bot-token", "slack: " + slack, slack},
		{"stripe", "stripe key " + stripe + " in settings", stripe},
		{"openai-legacy", "OPENAI_API_KEY " + openai, openai},
		{"openai-project", "using " + openaiProj + " now", openaiProj},
		{"anthropic", "ANTHROPIC " + anthropic + "\n", anthropic},
		{"jwt", "Authorization: Bearer " + jwt, jwt},
		{"private-key", "cat id_rsa\n" + pem + "\n", keyBody},
		{"private-key-cut", "-----BEGIN PRIVATE " + "KEY-----\n" + cutKeyBody, cutKeyBody},
		{"url-password", "psql postgres://dbuser:" + urlPass + "@db.internal:5432/app", urlPass},
		{"connection-string", "Server=db;Database=app;User Id=sa;Password=" + connPass + ";", connPass},
		{"env-assignment", "DEPLOY_TOKEN=" + envToken, envToken},
		{"json-assignment", `{"token": "` + jsonToken + `"}`, jsonToken},
		{"home", "open " + Home + "/src/app/main.go", Home},
		{"user", "Signed-off-by: " + User + " <z@q>", User},
	}
}
