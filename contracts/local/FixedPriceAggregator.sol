// SPDX-License-Identifier: MIT
pragma solidity ^0.8.12;

import "@openzeppelin/contracts/access/Ownable.sol";

/**
 * A Chainlink-style price feed (the AggregatorV3Interface reads) whose answer its owner sets, for the embedded local
 * chain and the tests. The TokenPaymaster reads it as "whole fee tokens per whole native token, with `decimals`
 * decimals"; each answer starts a new round.
 */
contract FixedPriceAggregator is Ownable {
    uint8 public immutable decimals;
    string public description;

    uint80 private roundId;
    int256 private answer;
    uint256 private updatedAt;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    /// @param owner_ set explicitly because under a CREATE2 factory msg.sender is the factory, not the deployer.
    constructor(address owner_, uint8 decimals_, string memory description_, int256 answer_) {
        require(owner_ != address(0), "FixedPriceAggregator: owner is zero");
        decimals = decimals_;
        description = description_;
        _transferOwnership(owner_);
        _setRound(answer_, block.timestamp);
    }

    function version() external pure returns (uint256) {
        return 1;
    }

    /// A new answer, dated now.
    function setAnswer(int256 answer_) external onlyOwner {
        _setRound(answer_, block.timestamp);
    }

    /// A new answer with any date, so tests can make the price stale (or a round that never completed, updatedAt 0).
    function setRoundData(int256 answer_, uint256 updatedAt_) external onlyOwner {
        _setRound(answer_, updatedAt_);
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId_, int256 answer_, uint256 startedAt, uint256 updatedAt_, uint80 answeredInRound)
    {
        return (roundId, answer, updatedAt, updatedAt, roundId);
    }

    function latestAnswer() external view returns (int256) {
        return answer;
    }

    function _setRound(int256 answer_, uint256 updatedAt_) private {
        roundId += 1;
        answer = answer_;
        updatedAt = updatedAt_;
        emit AnswerUpdated(answer_, roundId, updatedAt_);
    }
}
