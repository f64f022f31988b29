// Cardinality-exact mask builders shared by every baseline. Every method converts exactly
// K = round(rho * N) KV heads (N = layers x KV heads, K from target_count in core/head_bits.h),
// so the comparison with the search is at equal SWA ratio.
//
// Layer-level methods convert whole layers in a method-specific order. When K is not a multiple
// of H, the first floor(K / H) layers of the order are converted whole and the NEXT layer of the
// order gets the remaining K mod H heads, lowest head indices first (heads 0, 1, ...).
//   RAND  layers in a seeded random order (Rng(seed), Fisher-Yates).
//   INTR  interleaving: with c = floor(K / H) whole SWA layers, the f = L - c remaining layers
//         are spread evenly as the LAST layer of each of f equal blocks, i.e. layer
//         floor((j + 1) * L / f) - 1 for j = 0..f-1 (Gemma-style "k local, then one global");
//         all other layers are SWA; the partial remainder goes to the lowest-index kept layer.
//         E.g. L = 8, rho = 0.75: full layers 3 and 7.
//   BME   begin-middle-end: layers are kept full in the order
//           first, middle, last, second, next-middle, second-to-last, ...
//         (round j adds layer j, then the middle sequence m, m+1, m-1, m+2, ... with
//         m = floor((L - 1) / 2), then layer L-1-j; duplicates skipped). The f = L - c first
//         layers of that order stay full and the rest are SWA; the partial remainder goes to
//         the last kept layer (keep_order[f - 1]), so the placement is nested across ratios.
//         E.g. L = 5: keep order 0, 2, 4, 1, 3.
#pragma once
#include <cstdint>
#include <vector>

#include "search/core/head_bits.h"

namespace bosch::search {

// Converts layers in `order` (a permutation of 0..L-1): floor(k / H) whole layers, then k mod H
// heads (lowest indices) of the next one. Throws Error when k is outside [0, L*H] or `order`
// is not a permutation.
HeadBits convert_layers_in_order(const std::vector<int>& order, int n_layers, int n_heads, int k);

std::vector<int> random_layer_order(int n_layers, uint64_t seed);
// The layers INTR keeps full when f of them stay (ascending).
std::vector<int> interleaved_full_layers(int n_layers, int n_full);
// The order in which BME keeps layers full (a permutation of 0..L-1).
std::vector<int> bme_keep_order(int n_layers);

HeadBits random_layers_mask(int n_layers, int n_heads, int k, uint64_t seed);
HeadBits interleaved_mask(int n_layers, int n_heads, int k);
HeadBits bme_mask(int n_layers, int n_heads, int k);

// A seeded random permutation of the N heads: the first k are converted (random heads).
HeadBits random_heads_mask(int n_layers, int n_heads, int k, uint64_t seed);

}  // namespace bosch::search
