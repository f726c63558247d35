package redisstore

import (
	"strings"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// DefaultPrefix starts every key and channel name a Window uses:
// "chatprotocol:replay:".
const DefaultPrefix = "chatprotocol:replay:"

// turnKeys are the names of one turn's Redis keys and channel.
type turnKeys struct {
	frames  string // the stream: one entry per frame, id "<seq>-0"
	meta    string // the bounds: "<latest> <lower> <ended> <bytes>"
	channel string // the Pub/Sub channel the append script publishes on
}

// escaper makes a conversation or turn id safe inside a key: the
// separator ':' and the hash tag's braces cannot occur, so that two
// different keys never share names and every key of a turn hashes to the
// same Redis Cluster slot.
var escaper = strings.NewReplacer("%", "%25", ":", "%3A", "{", "%7B", "}", "%7D")

// keysOf returns the names of key's turn under prefix:
// <prefix>{<conversation>:<turn>}:f, :m and :n, the ids escaped, cut from
// one string (one allocation where three names would cost three).
func keysOf(prefix string, key replay.Key) turnKeys {
	c, t := escaper.Replace(key.ConversationID), escaper.Replace(key.TurnID)
	all := prefix + "{" + c + ":" + t + "}:f" + prefix + "{" + c + ":" + t + "}:m" + prefix + "{" + c + ":" + t + "}:n"
	n := len(all) / 3
	return turnKeys{frames: all[:n], meta: all[n : 2*n], channel: all[2*n:]}
}

// channelOf returns the name of key's channel under prefix, which every
// Wait names: keysOf(prefix, key).channel alone.
func channelOf(prefix string, key replay.Key) string { return nameOf(prefix, key, "n") }

// nameOf returns <prefix>{<conversation>:<turn>}:<kind>, the ids escaped,
// in one allocation when they need no escaping.
func nameOf(prefix string, key replay.Key, kind string) string {
	return prefix + "{" + escaper.Replace(key.ConversationID) + ":" + escaper.Replace(key.TurnID) + "}:" + kind
}
