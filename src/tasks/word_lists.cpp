#include "tasks/word_lists.h"

namespace bosch {

const std::vector<std::string_view>& key_adjectives() {
  static const std::vector<std::string_view> w = {
      "abundant", "agile", "amber", "ancient", "arctic", "autumn", "bold", "brave", "breezy",
      "bright", "brisk", "calm", "candid", "careful", "cheerful", "chilly", "clever", "cloudy",
      "cosmic", "crimson", "crisp", "curious", "dapper", "daring", "dazzling", "delicate",
      "distant", "dusty", "eager", "early", "elegant", "emerald", "fancy", "fearless", "fierce",
      "fluffy", "foggy", "fragrant", "frozen", "gentle", "giant", "gleaming", "golden", "graceful",
      "grumpy", "hasty", "hidden", "hollow", "humble", "icy", "jolly", "jovial", "keen", "lively",
      "lonely", "loyal", "lucky", "marble", "mellow", "misty", "modest", "narrow", "nimble",
      "noble", "odd", "olive", "patient", "pearly", "placid", "plucky", "polite", "proud",
      "quiet", "quirky", "radiant", "rapid", "rustic", "scarlet", "serene", "shiny", "silent",
      "silver", "sleepy", "smooth", "snowy", "sparkling", "spicy", "stormy", "sturdy", "sunny",
      "swift", "tame", "tender", "tidy", "tiny", "vast", "velvet", "vivid", "wandering", "witty",
      "wooden", "zealous"};
  return w;
}

const std::vector<std::string_view>& key_nouns() {
  static const std::vector<std::string_view> w = {
      "anchor", "apple", "arch", "badger", "balloon", "banjo", "barrel", "beacon", "bicycle",
      "blanket", "bottle", "bridge", "bucket", "butter", "cabin", "cactus", "canoe", "canyon",
      "carpet", "castle", "cello", "cherry", "chimney", "cliff", "clock", "comet", "compass",
      "cookie", "cottage", "crayon", "crystal", "dolphin", "dragon", "drum", "eagle", "falcon",
      "feather", "fiddle", "forest", "fountain", "garden", "glacier", "goblet", "hammer",
      "harbor", "helmet", "island", "jacket", "kettle", "kite", "ladder", "lantern", "lemon",
      "lighthouse", "lizard", "magnet", "maple", "meadow", "mirror", "mitten", "muffin", "needle",
      "nutmeg", "orchard", "otter", "paddle", "parrot", "pebble", "pepper", "piano", "pillow",
      "pine", "planet", "pumpkin", "quilt", "rabbit", "raft", "ribbon", "river", "rocket",
      "saddle", "sailboat", "scarf", "shovel", "spoon", "squirrel", "statue", "teapot",
      "thimble", "tiger", "tractor", "trumpet", "tulip", "turtle", "umbrella", "valley", "violin",
      "wagon", "walrus", "whistle", "window", "zebra"};
  return w;
}

const std::vector<std::string_view>& markov_vocabulary() {
  static const std::vector<std::string_view> w = {
      "the", "a", "one", "every", "some", "this", "that", "old", "new", "small", "large", "red",
      "green", "blue", "warm", "cold", "long", "short", "good", "little", "man", "woman", "child",
      "dog", "cat", "bird", "horse", "fish", "tree", "house", "road", "town", "city", "farm",
      "boat", "sea", "hill", "field", "door", "room", "table", "book", "letter", "song", "story",
      "day", "night", "morning", "evening", "year", "week", "water", "bread", "milk", "stone",
      "friend", "teacher", "king", "queen", "baker", "sailor", "farmer", "walks", "runs",
      "sees", "finds", "takes", "gives", "makes", "reads", "writes", "sings", "opens", "closes",
      "watches", "carries", "likes", "wants", "keeps", "builds", "paints", "brings", "leaves",
      "was", "is", "had", "went", "came", "saw", "found", "made", "said", "told", "knew",
      "thought", "in", "on", "at", "near", "under", "over", "with", "from", "to", "into",
      "behind", "across", "and", "but", "then", "so", "because", "while", "when", "after",
      "before", "very", "slowly", "quickly", "again", "today", "there", "here", "soon", "always",
      "never", "often", "he", "she", "they", "we", "it", "his", "her", "their", "our"};
  return w;
}

const std::vector<std::string_view>& noise_sentences() {
  static const std::vector<std::string_view> w = {"The grass is green.", "The sky is blue.",
                                                  "The sun is yellow.", "Here we go.",
                                                  "There and back again."};
  return w;
}

}  // namespace bosch
