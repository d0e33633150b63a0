// The --like presets: hierarchical block models whose planted cuts are METIS's published cuts
// of the real graph at 2 to 32 parts (ogbn-products 2.7/6.6/9.7/13.3/17.5%, ogbn-papers100M
// 5.5/12.0/17.6/22.8/27.1%, ogbn-arxiv 33.6/43.1% at 16/32 with 2 to 8 on a smooth curve
// below), with its class count, feature width and average degree (pairs are drawn a little
// above it: repeated pairs are dropped). Arxiv's homophily of 0.655 at its cuts needs uneven
// classes (equal ones reach 0.52). A share of each leaf labelled at random sets what
// GraphSAGE can reach; the features (the class centre, an offset for each community level
// below the class, and noise) what an MLP can, both near the real graph's published
// accuracies given as many training labels as the real graph has (bench/README.md, "Graphs
// like the real ones").
#include <string>

#include "strata/error.h"
#include "strata/generate.h"

namespace strata {

void ApplyGraphPreset(std::string_view name, GenerateOptions& o) {
  o.graph = GraphModel::kHsbm;
  o.degree_exponent = 2.5;
  if (name == "products") {
    o.classes = 47;
    o.feature_dim = 100;
    o.avg_degree = 52;
    o.cuts = {0.027, 0.066, 0.097, 0.133, 0.175};
    o.homophily = 0.81;
    o.label_noise = 0.21;
    o.noise = 0.32;
    o.community_offset = 0.5;
    o.train_ratio = 0.08;
    o.val_ratio = 0.02;
    o.test_ratio = 0.1;
  } else if (name == "papers100M") {
    o.classes = 172;
    o.feature_dim = 128;
    o.avg_degree = 30;
    o.cuts = {0.055, 0.12, 0.176, 0.228, 0.271};
    o.homophily = 1;  // as high as the cuts leave it
    o.label_noise = 0.35;
    o.noise = 0.26;
    o.community_offset = 0.5;
    o.train_ratio = 0.011;
    o.val_ratio = 0.0011;
    o.test_ratio = 0.002;
  } else if (name == "arxiv") {
    o.classes = 40;
    o.class_skew = 1.5;
    o.feature_dim = 128;
    o.avg_degree = 14.1;
    o.cuts = {0.08, 0.16, 0.245, 0.336, 0.431};
    o.homophily = 0.655;
    o.label_noise = 0.27;
    o.noise = 0.38;
    o.community_offset = 0.5;
    o.train_ratio = 0.537;
    o.val_ratio = 0.176;
    o.test_ratio = 0.287;
  } else {
    throw Error::Input("--like " + std::string(name) + ": expected products, papers100M or arxiv");
  }
}

}  // namespace strata
